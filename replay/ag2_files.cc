#include "replay/ag2_files.h"

#include <fstream>
#include <sstream>

#include "engine/base/json_input.h"

namespace parley::replay {

std::unexpected<Ag2Error> ag2_data_error(std::string what) {
  return std::unexpected(Ag2Error{Ag2ErrorKind::kData, std::move(what)});
}

Ag2Result<std::string> read_ag2_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::unexpected(
        Ag2Error{Ag2ErrorKind::kIo, "cannot read " + path.string()});
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Ag2Result<nlohmann::json> read_ag2_json(const std::filesystem::path& path) {
  auto text = read_ag2_text(path);
  if (!text) return std::unexpected(text.error());
  auto value = engine::parse_json_input(*text, path.string());
  if (!value) return ag2_data_error(value.error().message);
  return std::move(*value);
}

}  // namespace parley::replay
