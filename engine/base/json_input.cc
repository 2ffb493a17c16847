#include "engine/base/json_input.h"

#include <string>

#include "engine/base/input_limits.h"

namespace parley::engine {
namespace {

template <typename Json>
Result<Json> parse_bounded(std::string_view text, std::string_view what) {
  if (text.size() > kMaxJsonDocumentBytes) {
    return invalid(std::string(what) + ": " + std::to_string(text.size()) +
                   " bytes; the limit is " +
                   std::to_string(kMaxJsonDocumentBytes));
  }
  if (json_depth(text) > kMaxJsonDepth) {
    return invalid(std::string(what) + ": nests deeper than " +
                   std::to_string(kMaxJsonDepth) + " levels");
  }
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return invalid(std::string(what) + ": not valid JSON");
  }
  return value;
}

}  // namespace

Result<nlohmann::json> parse_json_input(std::string_view text,
                                        std::string_view what) {
  return parse_bounded<nlohmann::json>(text, what);
}

Result<nlohmann::ordered_json> parse_ordered_json_input(std::string_view text,
                                                        std::string_view what) {
  return parse_bounded<nlohmann::ordered_json>(text, what);
}

}  // namespace parley::engine
