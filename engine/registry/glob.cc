#include "engine/registry/glob.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/utf8.h"

namespace parley::engine {
namespace {

// One character class: the characters in `ranges` (inclusive), or with
// `negated` the characters outside them.
struct CharSet {
  bool negated = false;
  std::vector<std::pair<char32_t, char32_t>> ranges;

  bool contains(char32_t c) const {
    for (const auto& [lo, hi] : ranges) {
      if (lo <= c && c <= hi) return !negated;
    }
    return negated;
  }
};

struct Token {
  enum Kind { kLiteral, kAny, kStar, kSet } kind;
  char32_t literal = 0;
  CharSet set;

  bool matches(char32_t c) const {
    switch (kind) {
      case kLiteral:
        return c == literal;
      case kAny:
        return true;
      case kSet:
        return set.contains(c);
      case kStar:
        break;
    }
    return false;
  }
};

// The set for the bracket body pat[i, j) (j at the closing `]`), built the
// way fnmatch.translate builds its regex class: split at range hyphens into
// chunks (the first character, after an optional `!`, never starts a
// range), fold away empty ranges, then read the chunks as a regex class in
// which only the hyphens between chunks are range operators.
CharSet bracket_set(const std::u32string& pat, std::size_t i, std::size_t j) {
  std::vector<std::u32string> chunks;
  const std::u32string_view body(pat.data() + i, j - i);
  if (body.find(U'-') == std::u32string_view::npos) {
    chunks.emplace_back(body);
  } else {
    std::size_t k = pat[i] == U'!' ? i + 2 : i + 1;
    while (k < j) {
      const std::size_t hyphen = pat.find(U'-', k);
      if (hyphen == std::u32string::npos || hyphen >= j) break;
      chunks.push_back(pat.substr(i, hyphen - i));
      i = hyphen + 1;
      k = hyphen + 3;
    }
    if (i < j) {
      chunks.push_back(pat.substr(i, j - i));
    } else {
      chunks.back() += U'-';
    }
    for (std::size_t n = chunks.size() - 1; n > 0; --n) {
      if (chunks[n - 1].back() > chunks[n].front()) {
        chunks[n - 1].pop_back();
        chunks[n - 1] += chunks[n].substr(1);
        chunks.erase(chunks.begin() + static_cast<std::ptrdiff_t>(n));
      }
    }
  }

  // The class as a sequence of characters, `true` marking a range operator.
  std::vector<std::pair<char32_t, bool>> seq;
  for (std::size_t n = 0; n < chunks.size(); ++n) {
    if (n > 0) seq.emplace_back(U'-', true);
    for (char32_t c : chunks[n]) seq.emplace_back(c, false);
  }
  CharSet set;
  std::size_t at = 0;
  if (!seq.empty() && seq[0] == std::pair<char32_t, bool>(U'!', false)) {
    set.negated = true;
    at = 1;
  }
  while (at < seq.size()) {
    const char32_t lo = seq[at].first;
    if (at + 2 < seq.size() && seq[at + 1].second) {
      const char32_t hi = seq[at + 2].first;
      if (lo <= hi) set.ranges.emplace_back(lo, hi);
      at += 3;
    } else {
      set.ranges.emplace_back(lo, lo);
      at += 1;
    }
  }
  return set;
}

std::vector<Token> compile(const std::u32string& pat) {
  std::vector<Token> tokens;
  const std::size_t n = pat.size();
  std::size_t i = 0;
  while (i < n) {
    const char32_t c = pat[i++];
    if (c == U'*') {
      if (tokens.empty() || tokens.back().kind != Token::kStar) {
        tokens.push_back(Token{Token::kStar, 0, {}});
      }
    } else if (c == U'?') {
      tokens.push_back(Token{Token::kAny, 0, {}});
    } else if (c == U'[') {
      std::size_t j = i;
      if (j < n && pat[j] == U'!') ++j;
      if (j < n && pat[j] == U']') ++j;
      while (j < n && pat[j] != U']') ++j;
      if (j >= n) {
        tokens.push_back(Token{Token::kLiteral, U'[', {}});
      } else {
        tokens.push_back(Token{Token::kSet, 0, bracket_set(pat, i, j)});
        i = j + 1;
      }
    } else {
      tokens.push_back(Token{Token::kLiteral, c, {}});
    }
  }
  return tokens;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view name) {
  // The common patterns, without decoding: `*` matches every name, and an
  // ASCII pattern without wildcards only itself (any other name decodes to
  // other code points, invalid bytes included).
  if (pattern == "*") return true;
  if (std::ranges::all_of(pattern, [](char c) {
        return static_cast<unsigned char>(c) < 0x80 && c != '*' && c != '?' &&
               c != '[';
      })) {
    return pattern == name;
  }
  const std::vector<Token> tokens = compile(decode_utf8(pattern));
  const std::u32string text = decode_utf8(name);
  // Every token but `*` consumes exactly one character, so backtracking to
  // the most recent `*` is enough.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t t = 0;
  std::size_t c = 0;
  std::size_t star = kNone;
  std::size_t star_c = 0;
  while (c < text.size()) {
    if (t < tokens.size() && tokens[t].kind == Token::kStar) {
      star = t++;
      star_c = c;
    } else if (t < tokens.size() && tokens[t].matches(text[c])) {
      ++t;
      ++c;
    } else if (star != kNone) {
      t = star + 1;
      c = ++star_c;
    } else {
      return false;
    }
  }
  while (t < tokens.size() && tokens[t].kind == Token::kStar) ++t;
  return t == tokens.size();
}

bool matches_any(std::span<const std::string> patterns, std::string_view name) {
  for (const std::string& pattern : patterns) {
    if (glob_match(pattern, name)) return true;
  }
  return false;
}

}  // namespace parley::engine
