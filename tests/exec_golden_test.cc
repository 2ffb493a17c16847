// The golden scripts (tests/golden/scripts, recorded from AG2's own hub):
// `parley exec` must print what AG2 printed, line for line, with every
// 32-hex id canonicalised to idN by first appearance and only the code
// compared when the code is the generic "error" (its message is Python's).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "log/rocksdb_log_store.h"
#include "tests/test_support.h"
#include "tools/script_runner.h"

namespace parley {
namespace {

using nlohmann::json;

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Rewrites ids in order of first appearance across one whole output.
class Canonicaliser {
 public:
  json canonical(const std::string& line) {
    const std::string sorted = json::parse(line).dump();
    static const std::regex kId("\\b[0-9a-f]{32}\\b");
    std::string out;
    auto tail = sorted.cbegin();
    for (std::sregex_iterator it(sorted.begin(), sorted.end(), kId), end;
         it != end; ++it) {
      out.append(tail, (*it)[0].first);
      auto [slot, added] =
          ids_.try_emplace(it->str(), "id" + std::to_string(ids_.size() + 1));
      out += slot->second;
      tail = (*it)[0].second;
    }
    out.append(tail, sorted.cend());
    json value = json::parse(out);
    if (value.value("ok", true) == false && value["error_code"] == "error") {
      value["error_message"] = "(any)";
    }
    return value;
  }

 private:
  std::map<std::string, std::string> ids_;
};

// A deliberate difference from AG2: Parley refuses a non-participant's post
// in the hub, for every caller, before the adapter would refuse it with its
// own protocol error.
bool is_participant_refusal(const json& expected, const json& actual) {
  static const std::regex kRefusal(
      "channel 'id[0-9]+' only accepts sends from participants, got "
      "'id[0-9]+'");
  return expected.value("error_code", "") == "protocol_error" &&
         actual.value("error_code", "") == "protocol_error" &&
         std::regex_match(actual.value("error_message", ""), kRefusal);
}

void check_script(const std::string& name) {
  const std::filesystem::path dir = PARLEY_GOLDEN_DIR "/scripts";
  testing::ScratchDir data;
  auto runner = engine::ScriptRunner::start(
      [&]() -> engine::Result<std::shared_ptr<log::LogStore>> {
        auto opened = log::open_rocksdb_log_store(data.path() / "store");
        REQUIRE(opened.has_value());
        return std::shared_ptr<log::LogStore>(std::move(opened->store));
      });
  REQUIRE(runner.has_value());
  std::vector<std::string> actual;
  std::vector<std::string> script;
  for (const auto& line : lines_of(dir / (name + ".jsonl"))) {
    if (auto output = (*runner)->run_line(line)) {
      actual.push_back(*output);
      script.push_back(line);
    }
  }
  const auto expected = lines_of(dir / (name + ".ag2.jsonl"));
  REQUIRE(expected.size() == actual.size());
  Canonicaliser expected_ids, actual_ids;
  std::size_t matching = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const json want = expected_ids.canonical(expected[i]);
    const json got = actual_ids.canonical(actual[i]);
    if (want == got || is_participant_refusal(want, got)) {
      ++matching;
      continue;
    }
    INFO("op " << i + 1 << ": " << script[i]);
    INFO("expected: " << want.dump());
    INFO("actual:   " << got.dump());
    CHECK(want == got);
  }
  MESSAGE(name << ": " << matching << "/" << actual.size() << " ops match");
}

TEST_CASE("golden script basics prints what AG2 printed") {
  check_script("basics");
}

TEST_CASE("golden random scripts print what AG2 printed") {
  for (int n = 1; n <= 5; ++n) {
    CAPTURE(n);
    check_script("random-" + std::to_string(n));
  }
}

}  // namespace
}  // namespace parley
