// Hash maps keyed by std::string that are searched by std::string_view
// without building a std::string: ids are 32 characters or more, past the
// small-string buffer, so building one to search with allocates.
#pragma once

#include <cstddef>
#include <functional>  // std::equal_to
#include <string>
#include <string_view>
#include <unordered_map>

#include "schemas/record_checksum.h"

namespace parley::log {

// Hashed with XXH3-64: on 36-byte ids a third of the instructions of
// std::hash.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view text) const noexcept {
    return schema::xxh3_64(text);
  }
};

template <typename Value>
using StringMap =
    std::unordered_map<std::string, Value, StringHash, std::equal_to<>>;

}  // namespace parley::log
