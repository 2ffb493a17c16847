// Helpers the built-in adapters share for the optional id fields of their
// states and for writing a state as JSON text. Included by adapter .cc
// files only.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace parley::engine {

// The field as AG2 prints it: the string, or null.
inline nlohmann::json nullable(const std::optional<std::string>& text) {
  return text ? nlohmann::json(*text) : nlohmann::json(nullptr);
}

// Sets the field, reusing the string's capacity when it already holds a
// value, so a fold does not allocate once the field was set once.
inline void assign(std::optional<std::string>& target, std::string_view value) {
  if (target) {
    target->assign(value);
  } else {
    target.emplace(value);
  }
}

// A state as compact JSON text (AdapterState::to_json). Never throws: text
// that is not UTF-8 (only a damaged record of a schema without checksums
// can bring one into a fold) is written with each bad byte as U+FFFD.
inline std::string state_text(const nlohmann::json& state) {
  return state.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace parley::engine
