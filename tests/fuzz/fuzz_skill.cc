// fuzz_skill: SKILL.md text through parse_skill_frontmatter, AG2's
// front-matter splitter (register, set_skill and import-ag2 take SKILL.md
// from outside).
//
// Asserts, for UTF-8 input (the parser's contract; other bytes must still
// not crash it): text without an opening fence is all body; the body is
// the text's tail; keys are unique, stripped, without ':' and not
// comments; values are stripped single lines; keys and values are UTF-8;
// and a document with front matter written back as "---", "key: value"
// lines, "---" and its body parses to the same document.
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/base/input_limits.h"
#include "engine/registry/skill.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

bool is_stripped(std::string_view s) {
  constexpr std::string_view kAsciiSpace = " \t\n\v\f\r\x1c\x1d\x1e\x1f";
  return s.empty() || (kAsciiSpace.find(s.front()) == std::string_view::npos &&
                       kAsciiSpace.find(s.back()) == std::string_view::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace parley;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const engine::SkillDocument doc = engine::parse_skill_frontmatter(text);
  if (!engine::is_valid_utf8(text)) return 0;

  FUZZ_CHECK(text.ends_with(doc.body), "the body is not the text's tail");
  if (!text.starts_with("---")) {
    FUZZ_CHECK(doc.frontmatter.empty() && doc.body == text,
               "front matter found without an opening fence");
  }
  bool writable = !doc.frontmatter.empty();
  for (std::size_t i = 0; i < doc.frontmatter.size(); ++i) {
    const auto& [key, value] = doc.frontmatter[i];
    FUZZ_CHECK(engine::is_valid_utf8(key) && engine::is_valid_utf8(value),
               "a key or value is not UTF-8: " + key);
    FUZZ_CHECK(is_stripped(key) && is_stripped(value),
               "an unstripped key or value: '" + key + "': '" + value + "'");
    FUZZ_CHECK(key.find(':') == std::string::npos, "a key holds ':': " + key);
    FUZZ_CHECK(!key.starts_with('#'), "a comment line became a key: " + key);
    FUZZ_CHECK(value.find('\n') == std::string::npos &&
                   value.find('\r') == std::string::npos,
               "a value spans lines: " + value);
    for (std::size_t j = 0; j < i; ++j) {
      FUZZ_CHECK(doc.frontmatter[j].first != key, "a duplicate key: " + key);
    }
    // A key line starting with "---" would read as the closing fence.
    if (key.starts_with("-")) writable = false;
  }
  if (writable) {
    std::string again = "---\n";
    for (const auto& [key, value] : doc.frontmatter) {
      again += key + ": " + value + "\n";
    }
    again += "---\n" + doc.body;
    const engine::SkillDocument reparsed =
        engine::parse_skill_frontmatter(again);
    FUZZ_CHECK(
        reparsed.frontmatter == doc.frontmatter && reparsed.body == doc.body,
        "the document written back parses differently:\n" + again);
  }
  return 0;
}
