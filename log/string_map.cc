#include "log/string_map.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace parley::log {

std::size_t hash_string(std::string_view text) noexcept {
  return XXH3_64bits(text.data(), text.size());
}

}  // namespace parley::log
