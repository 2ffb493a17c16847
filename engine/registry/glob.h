// Access-rule globs: `access.inbound_from` / `outbound_to` patterns over agent
// names, with Python's `fnmatch.fnmatchcase` semantics.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace parley::engine {

// `fnmatch.fnmatchcase(name, pattern)` (Python 3.11): case-sensitive; the
// whole name must match; `*` matches any run of characters (newlines and
// `/` included), `?` exactly one character, `[seq]` / `[!seq]` one character
// in / not in the set. In a set a `]` right after `[` or `[!` is literal,
// `a-z` is a range, a leading or trailing `-` is literal, and empty ranges
// such as `z-a` are dropped as Python drops them (`[z-a]` matches nothing,
// `[!z-a]` any character). A `[` without a closing `]` is a literal `[`.
// Both strings are UTF-8 and are compared by code point.
bool glob_match(std::string_view pattern, std::string_view name);

// True when `name` matches at least one of `patterns`.
bool matches_any(std::span<const std::string> patterns, std::string_view name);

}  // namespace parley::engine
