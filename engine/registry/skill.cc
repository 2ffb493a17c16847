#include "engine/registry/skill.h"

#include <algorithm>
#include <array>
#include <string>

namespace parley::engine {
namespace {

constexpr std::string_view kFence = "---";

// UTF-8 encodings of the code points Python's `str.isspace` accepts.
constexpr std::array<std::string_view, 29> kPythonSpaces = {
    "\t",           "\n",
    "\v",           "\f",
    "\r",           "\x1c",
    "\x1d",         "\x1e",
    "\x1f",         " ",
    "\xc2\x85",     "\xc2\xa0",
    "\xe1\x9a\x80", "\xe2\x80\x80",
    "\xe2\x80\x81", "\xe2\x80\x82",
    "\xe2\x80\x83", "\xe2\x80\x84",
    "\xe2\x80\x85", "\xe2\x80\x86",
    "\xe2\x80\x87", "\xe2\x80\x88",
    "\xe2\x80\x89", "\xe2\x80\x8a",
    "\xe2\x80\xa8", "\xe2\x80\xa9",
    "\xe2\x80\xaf", "\xe2\x81\x9f",
    "\xe3\x80\x80",
};

// UTF-8 encodings of Python's `str.splitlines` boundaries; "\r\n" first so
// it wins over "\r".
constexpr std::array<std::string_view, 11> kLineBreaks = {
    "\r\n", "\n",   "\r",       "\v",           "\f",           "\x1c",
    "\x1d", "\x1e", "\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9",
};

// Python's `str.strip()` on UTF-8 text. UTF-8 is self-synchronising, so a
// whole encoded sequence matched at either end is a whole code point.
std::string_view python_strip(std::string_view s) {
  for (bool again = true; again;) {
    again = false;
    for (std::string_view space : kPythonSpaces) {
      if (s.starts_with(space)) {
        s.remove_prefix(space.size());
        again = true;
      }
    }
  }
  for (bool again = true; again;) {
    again = false;
    for (std::string_view space : kPythonSpaces) {
      if (s.ends_with(space)) {
        s.remove_suffix(space.size());
        again = true;
      }
    }
  }
  return s;
}

// Python's `str.splitlines()`, except that it may also yield an empty last
// line (the caller skips empty lines anyway).
std::vector<std::string_view> python_splitlines(std::string_view s) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t break_size = 0;
    for (std::string_view brk : kLineBreaks) {
      if (s.substr(i).starts_with(brk)) {
        break_size = brk.size();
        break;
      }
    }
    if (break_size == 0) {
      ++i;
      continue;
    }
    lines.push_back(s.substr(start, i - start));
    i += break_size;
    start = i;
  }
  lines.push_back(s.substr(start));
  return lines;
}

void set_value(SkillDocument& doc, std::string_view key,
               std::string_view value) {
  auto it = std::find_if(doc.frontmatter.begin(), doc.frontmatter.end(),
                         [&](const auto& kv) { return kv.first == key; });
  if (it != doc.frontmatter.end()) {
    it->second = value;
  } else {
    doc.frontmatter.emplace_back(key, value);
  }
}

}  // namespace

SkillDocument parse_skill_frontmatter(std::string_view text) {
  SkillDocument doc;
  if (!text.starts_with(kFence)) {
    doc.body = text;
    return doc;
  }
  std::string_view rest = text.substr(kFence.size());
  if (rest.starts_with('\n')) rest.remove_prefix(1);
  const std::size_t closing = rest.find("\n---");
  if (closing == std::string_view::npos) {
    doc.body = text;
    return doc;
  }
  std::string_view body = rest.substr(closing + 1 + kFence.size());
  if (body.starts_with('\n')) body.remove_prefix(1);
  doc.body = body;

  for (std::string_view line : python_splitlines(rest.substr(0, closing))) {
    const std::string_view stripped = python_strip(line);
    if (stripped.empty() || stripped.starts_with('#')) continue;
    const std::size_t colon = stripped.find(':');
    if (colon == std::string_view::npos) continue;
    set_value(doc, python_strip(stripped.substr(0, colon)),
              python_strip(stripped.substr(colon + 1)));
  }
  return doc;
}

std::string render_fallback_skill(const Passport& passport,
                                  const Resume& resume) {
  std::vector<std::string> lines = {
      "---",
      "name: " + passport.name,
      "description: " + (resume.summary.empty() ? "Network-registered agent."
                                                : resume.summary),
      "---",
      "",
  };
  if (!resume.claimed_capabilities.empty()) {
    lines.push_back("## Capabilities");
    for (const auto& cap : resume.claimed_capabilities) {
      lines.push_back("- " + cap);
    }
    lines.push_back("");
  }
  if (!resume.domains.empty()) {
    lines.push_back("## Domains");
    for (const auto& domain : resume.domains) lines.push_back("- " + domain);
    lines.push_back("");
  }
  if (!resume.observed.empty()) {
    lines.push_back("## Track record");
    // std::map orders keys bytewise, which for UTF-8 is code point order,
    // the order of Python's sorted().
    for (const auto& [cap, stats] : resume.observed) {
      lines.push_back("- " + cap + ": " + std::to_string(stats.completed) +
                      " completed / " + std::to_string(stats.failed) +
                      " failed / " + std::to_string(stats.expired) +
                      " expired (n=" + std::to_string(stats.n) + ")");
    }
    lines.push_back("");
  }
  if (!resume.examples.empty()) {
    lines.push_back("## Examples");
    for (const auto& example : resume.examples) {
      lines.push_back(
          "- " + example.title + " \u2014 " +
          (example.outcome.empty() ? "no outcome" : example.outcome));
    }
    lines.push_back("");
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();

  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += '\n';
    out += lines[i];
  }
  out += '\n';
  return out;
}

}  // namespace parley::engine
