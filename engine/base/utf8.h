// UTF-8 decoding and encoding as Python treats text: a byte that does not
// start a well-formed sequence decodes alone, as U+DC00 + byte (Python's
// "surrogateescape"), and encodes back to that byte.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace parley::engine {

// Decodes the code point at `s[i]` and advances `i` past it. `i` must be
// below s.size().
inline char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  std::size_t extra = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if (lead < 0x80) {
    ++i;
    return lead;
  } else if (lead >= 0xc2 && lead <= 0xdf) {
    extra = 1, cp = lead & 0x1f, min = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    extra = 2, cp = lead & 0x0f, min = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    extra = 3, cp = lead & 0x07, min = 0x10000;
  } else {
    ++i;
    return 0xdc00 + lead;
  }
  bool ok = i + extra < s.size();
  for (std::size_t k = 1; ok && k <= extra; ++k) {
    const auto cont = static_cast<unsigned char>(s[i + k]);
    ok = (cont & 0xc0) == 0x80;
    cp = (cp << 6) | (cont & 0x3f);
  }
  if (!ok || cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    ++i;
    return 0xdc00 + lead;
  }
  i += extra + 1;
  return cp;
}

inline std::u32string decode_utf8(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) out += next_code_point(s, i);
  return out;
}

// Appends `cp`; an escaped byte (U+DC80..U+DCFF) as that byte.
inline void append_utf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp >= 0xdc80 && cp <= 0xdcff) {
    out += static_cast<char>(cp - 0xdc00);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

}  // namespace parley::engine
