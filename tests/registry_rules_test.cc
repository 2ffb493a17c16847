// Pure registry rules: SKILL.md parsing and fallback rendering (REG-18,
// REG-19), durations (CHAN-17), access globs (LIM-02) and auth schemes
// (REG-22).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/registry/auth.h"
#include "engine/registry/duration.h"
#include "engine/registry/glob.h"
#include "engine/registry/skill.h"

namespace parley::engine {
namespace {

using Frontmatter = std::vector<std::pair<std::string, std::string>>;

// ---- SKILL.md front matter ----

TEST_CASE("REG-18 front matter and body are split at the fences") {
  const auto doc = parse_skill_frontmatter(
      "---\nname: alice\ndescription: Senior policy analyst.\n---\n\n"
      "## What I do\n");
  CHECK(doc.frontmatter ==
        Frontmatter{{"name", "alice"},
                    {"description", "Senior policy analyst."}});
  CHECK(doc.body == "\n## What I do\n");
}

TEST_CASE("REG-18 a document without front matter is all body") {
  const std::string text = "# Alice\n\nname: not front matter\n";
  const auto doc = parse_skill_frontmatter(text);
  CHECK(doc.frontmatter.empty());
  CHECK(doc.body == text);
}

TEST_CASE("REG-18 unterminated front matter leaves the whole input as body") {
  const std::string text = "---\nname: alice\nno closing fence\n";
  const auto doc = parse_skill_frontmatter(text);
  CHECK(doc.frontmatter.empty());
  CHECK(doc.body == text);
}

TEST_CASE("REG-18 blank lines and # comment lines are skipped") {
  const auto doc = parse_skill_frontmatter(
      "---\n\nname: alice\n# role: ignored\n   # indented: comment\n\n"
      "role: analyst\n---\nbody");
  CHECK(doc.frontmatter == Frontmatter{{"name", "alice"}, {"role", "analyst"}});
  CHECK(doc.body == "body");
}

TEST_CASE("any text starting with --- opens front matter") {
  auto doc = parse_skill_frontmatter("----\na: 1\n---\nx");
  CHECK(doc.frontmatter == Frontmatter{{"a", "1"}});
  CHECK(doc.body == "x");
  doc = parse_skill_frontmatter("---foo\n---\nbody");
  CHECK(doc.frontmatter.empty());  // "foo" has no colon
  CHECK(doc.body == "body");
  doc = parse_skill_frontmatter("---a: 1\n---\nbody");
  CHECK(doc.frontmatter == Frontmatter{{"a", "1"}});
  CHECK(doc.body == "body");
}

TEST_CASE("text not starting with --- has no front matter") {
  const std::string text = " ---\na: 1\n---\nbody";
  const auto doc = parse_skill_frontmatter(text);
  CHECK(doc.frontmatter.empty());
  CHECK(doc.body == text);
}

TEST_CASE("an empty front matter block is not recognised") {
  const std::string text = "---\n---\nbody";
  const auto doc = parse_skill_frontmatter(text);
  CHECK(doc.frontmatter.empty());
  CHECK(doc.body == text);
}

TEST_CASE("a ---- closing fence leaves its extra dash in the body") {
  const auto doc = parse_skill_frontmatter("---\na: 1\n----\nbody");
  CHECK(doc.frontmatter == Frontmatter{{"a", "1"}});
  CHECK(doc.body == "-\nbody");
}

TEST_CASE("only one newline after the closing fence is dropped") {
  CHECK(parse_skill_frontmatter("---\na: 1\n---").body == "");
  CHECK(parse_skill_frontmatter("---\na: 1\n---\n").body == "");
  CHECK(parse_skill_frontmatter("---\na: 1\n---\n\n\nx").body == "\n\nx");
  CHECK(parse_skill_frontmatter("---\na: 1\n---x").body == "x");
}

TEST_CASE("lines split at the first colon, key and value stripped") {
  const auto doc = parse_skill_frontmatter(
      "---\n  url  :   http://host:80/x  \nempty:\n: anonymous\n---\n");
  CHECK(doc.frontmatter == Frontmatter{{"url", "http://host:80/x"},
                                       {"empty", ""},
                                       {"", "anonymous"}});
}

TEST_CASE("lines without a colon are skipped") {
  const auto doc = parse_skill_frontmatter("---\njust words\nk: v\n---\n");
  CHECK(doc.frontmatter == Frontmatter{{"k", "v"}});
}

TEST_CASE("values are not unquoted or typed") {
  const auto doc = parse_skill_frontmatter(
      "---\na: \"x\"\nb: 'y'\nc: [1, 2]\nd: 42\ne: |\n---\n");
  CHECK(doc.frontmatter == Frontmatter{{"a", "\"x\""},
                                       {"b", "'y'"},
                                       {"c", "[1, 2]"},
                                       {"d", "42"},
                                       {"e", "|"}});
}

TEST_CASE("a later duplicate key overwrites the value in place") {
  const auto doc = parse_skill_frontmatter("---\na: 1\nb: 2\na: 3\n---\n");
  CHECK(doc.frontmatter == Frontmatter{{"a", "3"}, {"b", "2"}});
}

TEST_CASE("CRLF front matter parses and the body keeps its CRs") {
  const auto doc = parse_skill_frontmatter(
      "---\r\nname: alice\r\nrole: x\r\n---\r\nbody\r\n");
  CHECK(doc.frontmatter == Frontmatter{{"name", "alice"}, {"role", "x"}});
  CHECK(doc.body == "\r\nbody\r\n");
}

TEST_CASE("header lines split and strip with Python's Unicode rules") {
  // NBSP, ideographic and em spaces strip; U+2028, CR and U+001C end lines;
  // U+001F is whitespace to str.strip.
  const auto doc = parse_skill_frontmatter(
      "---\n\xc2\xa0name\xe3\x80\x80:\xe2\x80\x83"
      "bob\xc2\xa0\xe2\x80\xa8k: v\rj: w\x1cz: y\x1f\n---\nb");
  CHECK(doc.frontmatter ==
        Frontmatter{{"name", "bob"}, {"k", "v"}, {"j", "w"}, {"z", "y"}});
  CHECK(doc.body == "b");
}

// ---- Fallback SKILL.md ----

Resume full_resume() {
  Resume resume;
  resume.summary = "Senior policy analyst.";
  resume.claimed_capabilities = {"debate", "analysis"};
  resume.domains = {"policy"};
  resume.observed["writing"] = ObservedStats{.n = 2, .completed = 1};
  resume.observed["debate"] =
      ObservedStats{.n = 3, .completed = 2, .failed = 1, .expired = 0};
  resume.examples = {ResumeExample{.title = "Brief", .outcome = "accepted"},
                     ResumeExample{.title = "Memo"}};
  return resume;
}

TEST_CASE("REG-19 fallback skill names the agent and lists its resume") {
  Passport passport;
  passport.name = "alice";
  const std::string out = render_fallback_skill(passport, full_resume());
  CHECK(out.starts_with("---\n"));
  CHECK(out.find("name: alice") != std::string::npos);
  CHECK(out.find("description: Senior policy analyst.") != std::string::npos);
  CHECK(out.find("## Capabilities\n- debate") != std::string::npos);
  CHECK(out.find("## Domains") != std::string::npos);
  CHECK(out.find("## Track record") != std::string::npos);
  CHECK(out.find("n=3") != std::string::npos);
}

TEST_CASE("REG-19 an empty resume renders the default description only") {
  Passport passport;
  passport.name = "solo";
  CHECK(render_fallback_skill(passport, Resume{}) ==
        "---\nname: solo\ndescription: Network-registered agent.\n---\n");
}

TEST_CASE("fallback skill renders every section in order, exactly") {
  Passport passport;
  passport.name = "alice";
  CHECK(render_fallback_skill(passport, full_resume()) ==
        "---\n"
        "name: alice\n"
        "description: Senior policy analyst.\n"
        "---\n"
        "\n"
        "## Capabilities\n"
        "- debate\n"
        "- analysis\n"
        "\n"
        "## Domains\n"
        "- policy\n"
        "\n"
        "## Track record\n"
        "- debate: 2 completed / 1 failed / 0 expired (n=3)\n"
        "- writing: 1 completed / 0 failed / 0 expired (n=2)\n"
        "\n"
        "## Examples\n"
        "- Brief \xe2\x80\x94 accepted\n"
        "- Memo \xe2\x80\x94 no outcome\n");
}

TEST_CASE("fallback skill skips empty sections and ends with one newline") {
  Passport passport;
  passport.name = "bob";
  Resume resume;
  resume.domains = {"law"};
  CHECK(render_fallback_skill(passport, resume) ==
        "---\nname: bob\ndescription: Network-registered agent.\n---\n\n"
        "## Domains\n- law\n");
  resume.domains.clear();
  resume.observed["zeta"] = ObservedStats{.n = 1, .expired = 1};
  resume.observed["alpha"] = ObservedStats{};
  CHECK(render_fallback_skill(passport, resume) ==
        "---\nname: bob\ndescription: Network-registered agent.\n---\n\n"
        "## Track record\n"
        "- alpha: 0 completed / 0 failed / 0 expired (n=0)\n"
        "- zeta: 0 completed / 0 failed / 1 expired (n=1)\n");
}

// ---- Durations ----

std::int64_t seconds(DurationSpec spec) {
  const auto parsed = parse_duration(spec);
  REQUIRE(parsed.has_value());
  return *parsed;
}

std::string duration_error(std::string text) {
  const auto parsed = parse_duration(DurationSpec(std::move(text)));
  REQUIRE_FALSE(parsed.has_value());
  CHECK(parsed.error().kind == ErrorKind::kInvalid);
  return parsed.error().message;
}

TEST_CASE("CHAN-17 valid durations") {
  CHECK(seconds(std::string("30s")) == 30);
  CHECK(seconds(std::string("15m")) == 900);
  CHECK(seconds(std::string("2h")) == 7200);
  CHECK(seconds(std::string("4h")) == 14400);
  CHECK(seconds(std::string("1d")) == 86400);
  CHECK(seconds(std::string("0s")) == 0);
  CHECK(seconds(std::int64_t{0}) == 0);
  CHECK(seconds(std::int64_t{3600}) == 3600);
  CHECK(seconds(std::string("")) == 0);
  CHECK(seconds(std::string("60")) == 60);
  CHECK(seconds(std::string("3600")) == 3600);
}

TEST_CASE("CHAN-17 malformed durations are argument errors") {
  CHECK(duration_error("abc") ==
        "invalid literal for int() with base 10: 'abc'");
  CHECK(duration_error("5x") == "invalid literal for int() with base 10: '5x'");
  CHECK(duration_error("10y") ==
        "invalid literal for int() with base 10: '10y'");
  CHECK(duration_error("fast") ==
        "invalid literal for int() with base 10: 'fast'");
  CHECK(wire_code(parse_duration(std::string("5x")).error().kind) == "error");
}

TEST_CASE("integer durations pass through, negatives included") {
  CHECK(seconds(std::int64_t{-5}) == -5);
  CHECK(seconds(std::int64_t{1} << 40) == std::int64_t{1} << 40);
}

TEST_CASE("a unit suffix applies to Python int() of the rest") {
  CHECK(duration_error("1.5h") ==
        "invalid literal for int() with base 10: '1.5'");
  CHECK(duration_error("1w") == "invalid literal for int() with base 10: '1w'");
  CHECK(duration_error("s") == "invalid literal for int() with base 10: ''");
  CHECK(duration_error("2H") == "invalid literal for int() with base 10: '2H'");
  CHECK(seconds(std::string("-5m")) == -300);
  CHECK(seconds(std::string("+2h")) == 7200);
  CHECK(seconds(std::string("007s")) == 7);
}

TEST_CASE("Python int() accepts whitespace, one sign and digit underscores") {
  CHECK(seconds(std::string(" 60 ")) == 60);
  CHECK(seconds(std::string("\t60\n")) == 60);
  CHECK(seconds(std::string(" 5 s")) == 5);
  CHECK(seconds(std::string("\xc2\xa0"
                            "5m")) == 300);  // NBSP
  CHECK(seconds(std::string("1_000")) == 1000);
  CHECK(seconds(std::string("-1_0s")) == -10);
  CHECK(duration_error("60 s ") ==
        "invalid literal for int() with base 10: '60 s '");
  CHECK(duration_error("- 5") ==
        "invalid literal for int() with base 10: '- 5'");
  CHECK(duration_error("+-5") ==
        "invalid literal for int() with base 10: '+-5'");
  CHECK(duration_error("_1") == "invalid literal for int() with base 10: '_1'");
  CHECK(duration_error("1_") == "invalid literal for int() with base 10: '1_'");
  CHECK(duration_error("1__0") ==
        "invalid literal for int() with base 10: '1__0'");
  CHECK(duration_error("-_1") ==
        "invalid literal for int() with base 10: '-_1'");
  CHECK(duration_error(" ") == "invalid literal for int() with base 10: ' '");
  CHECK(duration_error("0x10") ==
        "invalid literal for int() with base 10: '0x10'");
}

TEST_CASE("duration errors quote the literal as Python's repr does") {
  CHECK(duration_error("it'x") ==
        "invalid literal for int() with base 10: \"it'x\"");
  CHECK(duration_error("it's") ==  // the suffix is split off first
        "invalid literal for int() with base 10: \"it'\"");
  CHECK(duration_error("a\"b") ==
        "invalid literal for int() with base 10: 'a\"b'");
  CHECK(duration_error("a'\"b") ==
        "invalid literal for int() with base 10: 'a\\'\"b'");
  CHECK(duration_error("a\\b\tc\n") ==
        "invalid literal for int() with base 10: 'a\\\\b\\tc\\n'");
  // U+001C is not int() whitespace; repr escapes it.
  CHECK(duration_error("\x1c"
                       "5") ==
        "invalid literal for int() with base 10: '\\x1c5'");
  CHECK(duration_error("\xc3\xa9") ==
        "invalid literal for int() with base 10: '\xc3\xa9'");
  CHECK(duration_error("\xe2\x80\xa8") ==
        "invalid literal for int() with base 10: '\\u2028'");
}

TEST_CASE("durations beyond int64 are refused") {
  CHECK(seconds(std::string("9223372036854775807")) == INT64_MAX);
  CHECK(seconds(std::string("-9223372036854775808")) == INT64_MIN);
  CHECK(duration_error("9223372036854775808") ==
        "duration out of range: '9223372036854775808'");
  CHECK(duration_error("200000000000000000d") ==
        "duration out of range: '200000000000000000d'");
  CHECK(duration_error("99999999999999999999x") ==
        "invalid literal for int() with base 10: '99999999999999999999x'");
}

// ---- Access globs ----

TEST_CASE("default rule pattern * matches every name") {
  CHECK(glob_match("*", "alice"));
  CHECK(glob_match("*", ""));
  CHECK(glob_match("*", "a:b/c\nd"));
}

TEST_CASE("LIM-02 outbound patterns are globs over peer names") {
  const std::vector<std::string> outbound = {"bot-*"};
  CHECK(matches_any(outbound, "bot-bob"));
  CHECK_FALSE(matches_any(outbound, "user-eve"));
}

TEST_CASE("globs are anchored and case-sensitive") {
  CHECK(glob_match("carol", "carol"));
  CHECK_FALSE(glob_match("carol", "Carol"));
  CHECK_FALSE(glob_match("carol", "carol2"));
  CHECK_FALSE(glob_match("arol", "carol"));
  CHECK(glob_match("ag2:*:*", "ag2:team:alice"));
  CHECK_FALSE(glob_match("ag2:*:*", "ag2:alice"));
}

TEST_CASE("a pattern without wildcards matches only that name") {
  CHECK(glob_match("bob", "bob"));
  CHECK_FALSE(glob_match("bob", "bob\xff"));
  CHECK_FALSE(glob_match("bob", ""));
  CHECK(glob_match("j\xc3\xa9r\xc3\xb4me", "j\xc3\xa9r\xc3\xb4me"));
  CHECK_FALSE(glob_match("j\xc3\xa9r\xc3\xb4me", "jerome"));
}

TEST_CASE("* matches any run and ? exactly one character") {
  CHECK(glob_match("a*b", "ab"));
  CHECK(glob_match("a*b", "a\nxb"));
  CHECK(glob_match("a*b*c", "aXbYbZc"));
  CHECK_FALSE(glob_match("a*b", "a"));
  CHECK(glob_match("a**b", "axb"));
  CHECK(glob_match("?ob", "bob"));
  CHECK_FALSE(glob_match("?ob", "ob"));
  CHECK_FALSE(glob_match("?", ""));
  CHECK(glob_match("*?", "x"));
  CHECK_FALSE(glob_match("*?", ""));
  CHECK(glob_match("\xc3\xa9?", "\xc3\xa9\xe2\x82\xac"));  // by code point
  CHECK_FALSE(glob_match("??", "\xc3\xa9"));
}

TEST_CASE("bracket sets, negation and ranges") {
  CHECK(glob_match("bot-[abc]", "bot-b"));
  CHECK_FALSE(glob_match("bot-[abc]", "bot-d"));
  CHECK(glob_match("bot-[!abc]", "bot-d"));
  CHECK_FALSE(glob_match("bot-[!abc]", "bot-a"));
  CHECK(glob_match("v[0-9]", "v7"));
  CHECK_FALSE(glob_match("v[0-9]", "vx"));
  CHECK(glob_match("[a-cx-z]", "y"));
  CHECK_FALSE(glob_match("[a-cx-z]", "d"));
  CHECK(glob_match("[*]", "*"));
  CHECK_FALSE(glob_match("[?]", "x"));
  CHECK(glob_match("[^a]", "^"));  // ^ is literal in fnmatch
  CHECK_FALSE(glob_match("[^a]", "b"));
  CHECK(glob_match("[[]", "["));
  CHECK(glob_match("[\\]", "\\"));
  CHECK(glob_match("[&&]", "&"));
}

TEST_CASE("a closing bracket first in a set or after its ! is literal") {
  CHECK(glob_match("[]]", "]"));
  CHECK(glob_match("[!]]", "a"));
  CHECK_FALSE(glob_match("[!]]", "]"));
  CHECK(glob_match("[]a]", "a"));
}

TEST_CASE("leading and trailing hyphens in a set are literal") {
  CHECK(glob_match("[a-]", "-"));
  CHECK(glob_match("[a-]", "a"));
  CHECK(glob_match("[-a]", "-"));
  CHECK(glob_match("[!-a]", "b"));
  CHECK_FALSE(glob_match("[!-a]", "-"));
  CHECK(glob_match("[a-c-e]", "-"));
  CHECK(glob_match("[a-c-e]", "e"));
  CHECK_FALSE(glob_match("[a-c-e]", "d"));
  CHECK(glob_match("[--0]", "/"));
}

TEST_CASE("empty ranges are dropped as Python drops them") {
  CHECK_FALSE(glob_match("[z-a]", "z"));
  CHECK_FALSE(glob_match("[z-a]", "-"));
  CHECK(glob_match("[!z-a]", "q"));
  CHECK(glob_match("[z-a!]", "q"));  // the set folds to "!": any character
  CHECK(glob_match("[z-a!b]", "c"));
  CHECK_FALSE(glob_match("[z-a!b]", "b"));
  CHECK(glob_match("[a--b]", "b"));
  CHECK_FALSE(glob_match("[a--b]", "a"));
  CHECK_FALSE(glob_match("[a--b]", "-"));
  CHECK(glob_match("[!z-a-c]", "d"));
  CHECK_FALSE(glob_match("[!z-a-c]", "-"));
  CHECK_FALSE(glob_match("[!z-a-c]", "c"));
  CHECK(glob_match("[a-cd-a]", "b"));
  CHECK_FALSE(glob_match("[a-cd-a]", "d"));
}

TEST_CASE("an unclosed bracket matches a literal bracket") {
  CHECK(glob_match("[", "["));
  CHECK(glob_match("[a", "[a"));
  CHECK_FALSE(glob_match("[a", "a"));
  CHECK(glob_match("ab[", "ab["));
  CHECK(glob_match("*[", "a["));
  CHECK(glob_match("[!]", "[!]"));
}

TEST_CASE("matches_any needs one matching pattern, none matches nothing") {
  const std::vector<std::string> patterns = {"carol", "bot-?"};
  CHECK(matches_any(patterns, "carol"));
  CHECK(matches_any(patterns, "bot-1"));
  CHECK_FALSE(matches_any(patterns, "bob"));
  CHECK_FALSE(matches_any(std::vector<std::string>{}, "bob"));
}

// ---- Auth schemes ----

Passport passport_for(std::string name, std::string scheme, std::string claim) {
  Passport passport;
  passport.name = std::move(name);
  passport.auth.scheme = std::move(scheme);
  passport.auth.claim = std::move(claim);
  return passport;
}

std::string auth_error(const Result<void>& result) {
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().kind == ErrorKind::kAuthFailed);
  CHECK(wire_code(result.error().kind) == "auth_failed");
  return result.error().message;
}

TEST_CASE("the default auth registry holds only none") {
  const AuthRegistry registry;
  CHECK(registry.schemes() == std::vector<std::string>{"none"});
  CHECK(registry.validate(passport_for("alice", "none", "{}")).has_value());
  CHECK(auth_error(registry.validate(passport_for("a", "api_key", "{}"))) ==
        "unknown auth scheme: 'api_key'");
}

TEST_CASE("REG-22 an unknown auth scheme is refused") {
  const AuthRegistry registry;
  CHECK(auth_error(registry.validate(passport_for("alice", "jwt", "{}"))) ==
        "unknown auth scheme: 'jwt'");
  const auto found = registry.find("jwt");
  REQUIRE_FALSE(found.has_value());
  CHECK(found.error().kind == ErrorKind::kAuthFailed);
  CHECK(found.error().message == "unknown auth scheme: 'jwt'");
  CHECK(auth_error(registry.validate(passport_for("alice", "", "{}"))) ==
        "unknown auth scheme: ''");
}

TEST_CASE("a scheme can be removed from the registry") {
  AuthRegistry registry;
  registry.register_scheme(
      "api_key", std::make_shared<ApiKeyAuth>(ApiKeyAuth::KeyMap{{"a", "k"}}));
  registry.unregister_scheme("none");
  registry.unregister_scheme("jwt");  // unknown: ignored
  CHECK(registry.schemes() == std::vector<std::string>{"api_key"});
  CHECK(auth_error(registry.validate(passport_for("a", "none", "{}"))) ==
        "unknown auth scheme: 'none'");
}

TEST_CASE("NoAuth accepts every claim") {
  const NoAuth none;
  CHECK(none.validate(passport_for("a", "none", "{}"), "{}").has_value());
  CHECK(none.validate(passport_for("a", "jwt", "{\"token\":\"x\"}"),
                      "{\"token\":\"x\"}")
            .has_value());
}

TEST_CASE("api_key requires a non-empty string token in the claim") {
  const ApiKeyAuth auth(ApiKeyAuth::KeyMap{{"alice", "s3cret"}});
  const Passport alice = passport_for("alice", "api_key", "{}");
  const std::string missing =
      "api_key claim missing required string field 'token'";
  CHECK(auth_error(auth.validate(alice, "{}")) == missing);
  CHECK(auth_error(auth.validate(alice, R"({"token":""})")) == missing);
  CHECK(auth_error(auth.validate(alice, R"({"token":42})")) == missing);
  CHECK(auth_error(auth.validate(alice, R"({"token":null})")) == missing);
  CHECK(auth_error(auth.validate(alice, R"(["token"])")) == missing);
  CHECK(auth_error(auth.validate(alice, "not json")) == missing);
}

TEST_CASE("api_key refuses a name without a registered key") {
  const ApiKeyAuth auth(ApiKeyAuth::KeyMap{{"alice", "s3cret"}});
  CHECK(auth_error(auth.validate(passport_for("bob", "api_key", ""),
                                 R"({"token":"s3cret"})")) ==
        "no api_key registered for 'bob'");
}

TEST_CASE("api_key compares the token with the key for the passport name") {
  const ApiKeyAuth auth(
      ApiKeyAuth::KeyMap{{"alice", "s3cret"}, {"bob", "other"}});
  const Passport alice = passport_for("alice", "api_key", "");
  CHECK(auth.validate(alice, R"({"token":"s3cret"})").has_value());
  CHECK(auth_error(auth.validate(alice, R"({"token":"other"})")) ==
        "api_key mismatch for 'alice'");
  CHECK(auth_error(auth.validate(alice, R"({"token":"s3cre"})")) ==
        "api_key mismatch for 'alice'");
  CHECK(auth_error(auth.validate(alice, R"({"token":"s3cret!"})")) ==
        "api_key mismatch for 'alice'");
  CHECK(auth_error(auth.validate(alice, R"({"token":"S3cret"})")) ==
        "api_key mismatch for 'alice'");
}

TEST_CASE("api_key falls back to the resolver after the static map") {
  std::vector<std::string> asked;
  const ApiKeyAuth auth(
      {{"alice", "static"}},
      [&](std::string_view name) -> std::optional<std::string> {
        asked.emplace_back(name);
        if (name == "carol") return "resolved";
        return std::nullopt;
      });
  CHECK(auth.validate(passport_for("alice", "api_key", ""),
                      R"({"token":"static"})")
            .has_value());
  CHECK(asked.empty());
  CHECK(auth.validate(passport_for("carol", "api_key", ""),
                      R"({"token":"resolved"})")
            .has_value());
  CHECK(auth_error(auth.validate(passport_for("dave", "api_key", ""),
                                 R"({"token":"x"})")) ==
        "no api_key registered for 'dave'");
  CHECK(asked == std::vector<std::string>{"carol", "dave"});
}

TEST_CASE("the registry validates the passport's claim with its scheme") {
  AuthRegistry registry;
  registry.register_scheme("api_key", std::make_shared<ApiKeyAuth>(
                                          ApiKeyAuth::KeyMap{{"alice", "k"}}));
  CHECK(registry.schemes() == std::vector<std::string>{"api_key", "none"});
  CHECK(registry.validate(passport_for("alice", "api_key", R"({"token":"k"})"))
            .has_value());
  CHECK(auth_error(registry.validate(
            passport_for("alice", "api_key", R"({"token":"x"})"))) ==
        "api_key mismatch for 'alice'");
  CHECK(registry.validate(passport_for("alice", "none", "{}")).has_value());
}

TEST_CASE("re-registering a scheme replaces its adapter") {
  AuthRegistry registry;
  registry.register_scheme(
      "api_key",
      std::make_shared<ApiKeyAuth>(ApiKeyAuth::KeyMap{{"alice", "old"}}));
  const auto old_adapter = registry.find("api_key");
  REQUIRE(old_adapter.has_value());
  registry.register_scheme(
      "api_key",
      std::make_shared<ApiKeyAuth>(ApiKeyAuth::KeyMap{{"alice", "new"}}));
  CHECK(registry.schemes() == std::vector<std::string>{"api_key", "none"});
  CHECK(
      registry.validate(passport_for("alice", "api_key", R"({"token":"new"})"))
          .has_value());
  CHECK_FALSE(
      registry.validate(passport_for("alice", "api_key", R"({"token":"old"})"))
          .has_value());
  // An adapter already handed out stays usable.
  CHECK(
      (*old_adapter)
          ->validate(passport_for("alice", "api_key", ""), R"({"token":"old"})")
          .has_value());
  registry.register_scheme("none",
                           std::make_shared<ApiKeyAuth>(ApiKeyAuth::KeyMap{}));
  CHECK_FALSE(
      registry.validate(passport_for("alice", "none", "{}")).has_value());
}

}  // namespace
}  // namespace parley::engine
