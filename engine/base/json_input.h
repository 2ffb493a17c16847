// Parsing JSON that comes from outside (a script line, a wire frame, an
// imported file) without letting it exhaust the stack or memory: its size
// and nesting are checked by a linear scan before anything recurses into
// it.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/base/error.h"

namespace parley::engine {

// Bytes of one JSON document Parley parses.
inline constexpr std::size_t kMaxJsonDocumentBytes = 8 << 20;

// The JSON value of `text`, or kInvalid "<what>: <why>" when the text is
// larger than kMaxJsonDocumentBytes, nests deeper than kMaxJsonDepth
// (engine/base/input_limits.h) or is not JSON (invalid UTF-8 included).
Result<nlohmann::json> parse_json_input(std::string_view text,
                                        std::string_view what);
Result<nlohmann::ordered_json> parse_ordered_json_input(std::string_view text,
                                                        std::string_view what);

}  // namespace parley::engine
