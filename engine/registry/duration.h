// AG2's duration grammar (CHAN-17), used for TTL defaults.
#pragma once

#include <cstdint>
#include <string_view>

#include "engine/base/error.h"
#include "engine/registry/identity.h"

namespace parley::engine {

// Seconds for `spec`, as AG2's `parse_duration`:
//   * an integer is returned as-is (negative allowed);
//   * "" is 0;
//   * a string whose last character is s, m, h or d is Python `int()` of
//     the rest times 1, 60, 3600 or 86400 ("30s", "15m", "2h", "1d");
//   * any other string is Python `int()` of the whole string ("3600").
// Python `int()` accepts surrounding Unicode whitespace, one sign and single
// underscores between ASCII digits. Anything else is kInvalid with Python's
// message, e.g. "invalid literal for int() with base 10: '1.5'" for "1.5h".
// Values outside int64 are kInvalid too (Python's ints are unbounded).
Result<std::int64_t> parse_duration(const DurationSpec& spec);

// The longest TTL Parley keeps: 100 years.
inline constexpr std::int64_t kMaxTtlSeconds = 100LL * 36525 * 864;

// Seconds of a TTL (`field` names it): parse_duration, then refused when
// negative (AG2 reads a negative TTL as none; Parley asks for 0) or longer
// than kMaxTtlSeconds. 0 means no expiry.
Result<std::int64_t> parse_ttl(const DurationSpec& spec,
                               std::string_view field);

}  // namespace parley::engine
