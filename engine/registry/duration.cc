#include "engine/registry/duration.h"

#include <array>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>

#include "engine/base/python_repr.h"
#include "engine/base/utf8.h"

namespace parley::engine {
namespace {

// UTF-8 encodings of the whitespace Python's `int()` strips: `str.isspace`
// minus U+001C..U+001F.
constexpr std::array<std::string_view, 25> kIntSpaces = {
    "\t",           "\n",           "\v",
    "\f",           "\r",           " ",
    "\xc2\x85",     "\xc2\xa0",     "\xe1\x9a\x80",
    "\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82",
    "\xe2\x80\x83", "\xe2\x80\x84", "\xe2\x80\x85",
    "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88",
    "\xe2\x80\x89", "\xe2\x80\x8a", "\xe2\x80\xa8",
    "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f",
    "\xe3\x80\x80",
};

std::string_view strip_int_spaces(std::string_view s) {
  for (bool again = true; again;) {
    again = false;
    for (std::string_view space : kIntSpaces) {
      if (s.starts_with(space)) {
        s.remove_prefix(space.size());
        again = true;
      }
      if (s.ends_with(space)) {
        s.remove_suffix(space.size());
        again = true;
      }
    }
  }
  return s;
}

// Python's `int(text)` (base 10, ASCII digits) into an int64.
Result<std::int64_t> python_int(std::string_view text) {
  const auto bad_literal = [&] {
    return invalid("invalid literal for int() with base 10: " +
                   python_repr(text));
  };
  std::string_view s = strip_int_spaces(text);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return bad_literal();
  // Accumulate as a negative number so the int64 minimum is representable.
  std::int64_t value = 0;
  bool out_of_range = false;
  bool after_digit = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      if (!after_digit || i + 1 == s.size()) return bad_literal();
      after_digit = false;
      continue;
    }
    if (c < '0' || c > '9') return bad_literal();
    after_digit = true;
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_sub_overflow(value, c - '0', &value)) {
      out_of_range = true;
    }
  }
  if (!after_digit) return bad_literal();
  if (out_of_range ||
      (!negative && value == std::numeric_limits<std::int64_t>::min())) {
    return invalid("duration out of range: " + python_repr(text));
  }
  return negative ? value : -value;
}

std::int64_t unit_seconds(char suffix) {
  switch (suffix) {
    case 's':
      return 1;
    case 'm':
      return 60;
    case 'h':
      return 3600;
    case 'd':
      return 86400;
    default:
      return 0;
  }
}

}  // namespace

Result<std::int64_t> parse_duration(const DurationSpec& spec) {
  if (const auto* seconds = std::get_if<std::int64_t>(&spec)) return *seconds;
  const std::string_view text = std::get<std::string>(spec);
  if (text.empty()) return 0;
  const std::int64_t unit = unit_seconds(text.back());
  if (unit == 0) return python_int(text);
  auto count = python_int(text.substr(0, text.size() - 1));
  if (!count) return count;
  std::int64_t total = 0;
  if (__builtin_mul_overflow(*count, unit, &total)) {
    return invalid("duration out of range: " + python_repr(text));
  }
  return total;
}

Result<std::int64_t> parse_ttl(const DurationSpec& spec,
                               std::string_view field) {
  auto seconds = parse_duration(spec);
  if (!seconds) return seconds;
  const std::string written =
      std::holds_alternative<std::string>(spec)
          ? " (" + python_repr(std::get<std::string>(spec)) + ")"
          : "";
  if (*seconds < 0) {
    return invalid(std::string(field) + " must not be negative, got " +
                   std::to_string(*seconds) + " seconds" + written +
                   "; 0 means no expiry");
  }
  if (*seconds > kMaxTtlSeconds) {
    return invalid(std::string(field) + " must be at most " +
                   std::to_string(kMaxTtlSeconds) +
                   " seconds (100 years), got " + std::to_string(*seconds) +
                   written);
  }
  return seconds;
}

}  // namespace parley::engine
