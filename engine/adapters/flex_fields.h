// Field reads from FlexBuffer maps on fold paths: several keys in one pass
// over the map's sorted keys, with no allocation and no strcmp calls.
#pragma once

#include <flatbuffers/flexbuffers.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace parley::engine::flex_fields {

// <0, 0, >0 as the NUL-terminated `key` sorts before, equal to or after
// `name` in byte order.
inline int compare_key(const char* key, std::string_view name) {
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto k = static_cast<unsigned char>(key[i]);
    const auto n = static_cast<unsigned char>(name[i]);
    if (k != n) return k == 0 || k < n ? -1 : 1;
  }
  return key[name.size()] == 0 ? 0 : 1;
}

// found[i] = map[names[i]], a Null reference when absent. `names` must be
// sorted in byte order; they must not contain NUL.
template <std::size_t N>
std::array<flexbuffers::Reference, N> find(
    const flexbuffers::Map& map, const std::array<std::string_view, N>& names) {
  std::array<flexbuffers::Reference, N> found;  // all Null
  const auto keys = map.Keys();
  const auto values = map.Values();
  const std::size_t size = keys.size();
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < size && j < N) {
    const int order = compare_key(keys[i].AsKey(), names[j]);
    if (order < 0) {
      ++i;
    } else if (order > 0) {
      ++j;
    } else {
      found[j++] = values[i++];
    }
  }
  return found;
}

// The root map of `data`, or nullopt when empty or not a map.
inline std::optional<flexbuffers::Map> root_map(
    std::span<const std::uint8_t> data) {
  if (data.empty()) return std::nullopt;
  auto root = flexbuffers::GetRoot(data.data(), data.size());
  if (!root.IsMap()) return std::nullopt;
  return root.AsMap();
}

inline std::optional<std::string_view> string_of(flexbuffers::Reference value) {
  if (!value.IsString()) return std::nullopt;
  auto text = value.AsString();
  return std::string_view(text.c_str(), text.size());
}

}  // namespace parley::engine::flex_fields
