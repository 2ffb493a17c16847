// Hash maps keyed by std::string that are searched by std::string_view
// without building a std::string: ids are 32 characters or more, past the
// small-string buffer, so building one to search with allocates.
#pragma once

#include <cstddef>
#include <functional>  // std::equal_to
#include <string>
#include <string_view>
#include <unordered_map>

namespace parley::log {

// XXH3-64: on 36-byte ids a third of the instructions of std::hash.
std::size_t hash_string(std::string_view text) noexcept;

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const noexcept {
    return hash_string(text);
  }
};

template <typename Value>
using StringMap =
    std::unordered_map<std::string, Value, StringHash, std::equal_to<>>;

}  // namespace parley::log
