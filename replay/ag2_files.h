// Reading the files of an AG2 on-disk layout (replay/ag2_layout.h) as
// untrusted input: sizes and nesting bounded, malformed JSON a data error
// naming the file.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "replay/ag2_layout.h"

namespace parley::replay {

// A kData error.
std::unexpected<Ag2Error> ag2_data_error(std::string what);

// The bytes of `path`; kIo when it cannot be read.
Ag2Result<std::string> read_ag2_text(const std::filesystem::path& path);

// The JSON document of `path`; kIo when it cannot be read, kData (naming
// the file) when it is not JSON or exceeds Parley's input limits.
Ag2Result<nlohmann::json> read_ag2_json(const std::filesystem::path& path);

}  // namespace parley::replay
