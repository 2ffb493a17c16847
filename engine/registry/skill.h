// SKILL.md handling: AG2's front-matter splitter and the document rendered for
// an agent that registered no SKILL.md.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/registry/identity.h"

namespace parley::engine {

struct SkillDocument {
  // Key/value pairs in first-seen key order; a later duplicate key
  // overwrites the value in place. Values are verbatim text (no unquoting).
  std::vector<std::pair<std::string, std::string>> frontmatter;
  std::string body;
};

// Splits `text` exactly as AG2's `parse_skill_frontmatter` does, quirks
// included: an empty front-matter block (`---\n---`) is not recognised, a
// `----` closing fence leaves one `-` at the start of the body, and without
// a closing fence the whole input is the body. Header lines are split and
// stripped with Python's `str.splitlines` / `str.strip` rules (Unicode line
// boundaries and whitespace, so CRLF works). `text` must be UTF-8.
SkillDocument parse_skill_frontmatter(std::string_view text);

// AG2's `render_fallback_skill`: `---`/name/description/`---` front matter,
// then the non-empty sections Capabilities, Domains, Track record (observed
// capabilities in sorted order) and Examples, each followed by one blank
// line; trailing blank lines are dropped and the result ends with exactly
// one "\n".
std::string render_fallback_skill(const Passport& passport,
                                  const Resume& resume);

}  // namespace parley::engine
