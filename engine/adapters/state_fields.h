// Helpers the built-in adapters share for the optional id fields of their
// states. Included by adapter .cc files only.
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

}  // namespace parley::engine
