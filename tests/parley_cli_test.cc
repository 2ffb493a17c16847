// The parley binary, run as a user runs it: output and sysexits codes.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "log/rocksdb_log_store.h"
#include "tests/test_support.h"

namespace parley {
namespace {

using Run = testing::CommandRun;

Run parley(const std::string& arguments) {
  return testing::run_command(std::string(PARLEY_BINARY) + " " + arguments +
                              " 2>&1");
}

void fill(const std::filesystem::path& dir, int records) {
  auto opened = log::open_rocksdb_log_store(dir);
  REQUIRE(opened.has_value());
  for (int i = 0; i < records; ++i) {
    std::vector<log::AppendEntry> batch{testing::text_entry("c", "x")};
    REQUIRE(opened->store->append(batch).has_value());
  }
}

TEST_CASE("log info counts the records of a store by kind") {
  testing::ScratchDir dir;
  fill(dir.path(), 3);
  Run run = parley("log info --data " + dir.path().string());
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("last sequence  3\n") != std::string::npos);
  CHECK(run.out.find("records        3 Envelope\n") != std::string::npos);
  CHECK(run.out.find("torn tail      no\n") != std::string::npos);
}

TEST_CASE("log info on a missing store exits 66 and creates nothing") {
  testing::ScratchDir dir;
  Run run = parley("log info --data " + (dir.path() / "none").string());
  CHECK(run.exit_code == 66);
  CHECK(run.out.find("no Parley store") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "none"));
}

TEST_CASE("log info on a store held by another process exits 69") {
  testing::ScratchDir dir;
  auto held = log::open_rocksdb_log_store(dir.path());
  REQUIRE(held.has_value());
  Run run = parley("log info --data " + dir.path().string());
  CHECK(run.exit_code == 69);
  CHECK(run.out.find("locked") != std::string::npos);
}

TEST_CASE("a command line error exits 64") {
  CHECK(parley("").exit_code == 64);
  CHECK(parley("log info").exit_code == 64);
  CHECK(parley("no-such-command").exit_code == 64);
}

TEST_CASE(
    "a negative number for a count or a sequence exits 64 instead of "
    "wrapping around") {
  testing::ScratchDir dir;
  fill(dir.path(), 1);
  for (const char* arguments :
       {"stats --top -3", "log show c --tail -1", "log show c --from -1",
        "log dump --to -1", "replay c --at -2"}) {
    CAPTURE(arguments);
    Run run = parley(std::string(arguments) + " --data " + dir.path().string());
    CHECK(run.exit_code == 64);
    CHECK(run.out.find("expected a whole number, 0 or more") !=
          std::string::npos);
  }
}

TEST_CASE("--help exits 0 and shows an example") {
  Run run = parley("log info --help");
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("Example: parley log info --data") != std::string::npos);
}

TEST_CASE(
    "exec plays the tour: one result line per op, state kept across restart") {
  testing::ScratchDir dir;
  const std::string data = (dir.path() / "hub").string();
  Run run = parley("exec --data " + data +
                   " " PARLEY_SOURCE_DIR "/tools/examples/tour.jsonl");
  CHECK(run.exit_code == 0);
  std::size_t lines = 0, refused = 0;
  for (std::size_t at = 0; (at = run.out.find('\n', at)) != std::string::npos;
       ++at) {
    ++lines;
  }
  for (std::size_t at = 0;
       (at = run.out.find("\"ok\": false", at)) != std::string::npos; ++at) {
    ++refused;
  }
  CHECK(lines == 25);
  CHECK(refused == 1);  // carol speaking out of turn in the discussion
  CHECK(run.out.find("\"close_reason\": \"consulting_complete\"") !=
        std::string::npos);
  CHECK(run.out.find("\"close_reason\": \"approved\"") != std::string::npos);
  Run info = parley("log info --data " + data);
  CHECK(info.out.find("ChannelCreated") != std::string::npos);
}

TEST_CASE("exec plays the task example: TTL sweep, restart, close cascade") {
  testing::ScratchDir dir;
  Run run = parley("exec --data " + (dir.path() / "hub").string() +
                   " " PARLEY_SOURCE_DIR "/tools/examples/tasks.jsonl");
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("\"ok\": false") == std::string::npos);
  CHECK(run.out.find("\"error\": \"ttl_expired\"") != std::string::npos);
  CHECK(run.out.find("\"error\": \"channel_closed\"") != std::string::npos);
  CHECK(run.out.find("\"expired\": 1, \"failed\": 0, \"n\": 1") !=
        std::string::npos);
}

TEST_CASE("exec answers a malformed line with an error line and goes on") {
  testing::ScratchDir dir;
  const auto script = dir.path() / "script.jsonl";
  {
    std::ofstream out(script);
    out << "{not json\n"
        << "# a comment\n\n"
        << R"({"op": "nope", "params": {}})"
        << "\n"
        << R"({"op": "find_agent_id", "params": {"name": "x"}})"
        << "\n";
  }
  Run run = parley("exec --data " + (dir.path() / "hub").string() + " " +
                   script.string());
  CHECK(run.exit_code == 0);
  CHECK(run.out ==
        "{\"error_code\": \"error\", \"error_message\": \"script line: not "
        "valid JSON\", \"ok\": false}\n"
        "{\"error_code\": \"protocol_error\", \"error_message\": \"unknown "
        "control-plane op: 'nope'\", \"ok\": false}\n"
        "{\"ok\": true, \"result\": null}\n");
}

TEST_CASE("exec without a readable script exits 66") {
  testing::ScratchDir dir;
  Run run =
      parley("exec --data " + dir.path().string() + " /nonexistent.jsonl");
  CHECK(run.exit_code == 66);
}

TEST_CASE("exec given a directory as its script exits 66 and opens no store") {
  testing::ScratchDir dir;
  const auto data = dir.path() / "data";
  Run run = parley("exec --data " + data.string() + " " + dir.path().string());
  CHECK(run.exit_code == 66);
  CHECK(run.out == "parley: cannot read script " + dir.path().string() +
                       ": a directory\n");
  CHECK_FALSE(std::filesystem::exists(data));
}

}  // namespace
}  // namespace parley
