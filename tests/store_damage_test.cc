// What the command line does with a store that a crash, a flipped byte or
// a torn write damaged. Damage is real: `parley` is killed with SIGKILL,
// and bytes are flipped in the files RocksDB wrote.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "log/rocksdb_log_store.h"
#include "tests/test_support.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
using Run = testing::CommandRun;

Run parley(const std::string& arguments) {
  return testing::run_command(std::string(PARLEY_BINARY) + " " + arguments);
}

const std::string kGoldenScript =
    std::string(PARLEY_GOLDEN_DIR) + "/scripts/random-1.jsonl";

// A closed store holding the golden random-1 history, its log flushed to
// table files by the script's restarts.
void make_store(const fs::path& dir) {
  Run run = parley("exec --data " + dir.string() + " " + kGoldenScript);
  REQUIRE_MESSAGE(run.exit_code == 0, run.err);
}

std::vector<fs::path> table_files(const fs::path& dir) {
  std::vector<fs::path> tables;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".sst") tables.push_back(entry.path());
  }
  std::ranges::sort(tables);
  return tables;
}

fs::path largest_table(const fs::path& dir) {
  std::vector<fs::path> tables = table_files(dir);
  REQUIRE_FALSE(tables.empty());
  return *std::ranges::max_element(
      tables, {}, [](const fs::path& path) { return fs::file_size(path); });
}

void flip_byte(const fs::path& file, std::uintmax_t offset,
               unsigned char mask = 0xaf) {
  std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(stream);
  stream.seekg(static_cast<std::streamoff>(offset));
  char byte = 0;
  stream.read(&byte, 1);
  stream.seekp(static_cast<std::streamoff>(offset));
  byte = static_cast<char>(byte ^ mask);
  stream.write(&byte, 1);
}

// The read-only commands a user lists a store with.
const std::vector<std::string> kListings = {
    "channels -o jsonl", "agents -o jsonl", "log dump", "stats -o json"};

Run list(const std::string& listing, const fs::path& dir) {
  const std::size_t space = listing.find(' ');
  const std::string command = listing.substr(0, space);
  const std::string rest =
      space == std::string::npos ? std::string() : listing.substr(space);
  if (command == "log") {
    return parley("log dump --data " + dir.string());
  }
  return parley(command + " --data " + dir.string() + rest);
}

TEST_CASE(
    "a flipped byte in a table file makes every listing fail with the "
    "file named, never print a shorter store") {
  testing::ScratchDir dir;
  make_store(dir.path());
  const fs::path table = largest_table(dir.path());
  flip_byte(table, fs::file_size(table) - 100);
  for (const std::string& listing : kListings) {
    CAPTURE(listing);
    Run run = list(listing, dir.path());
    CHECK(run.exit_code == 65);
    CHECK(run.out.empty());
    CHECK_MESSAGE(run.err.find(table.filename().string()) != std::string::npos,
                  run.err);
  }
  Run audit = parley("audit --data " + dir.path().string());
  CHECK(audit.exit_code == 65);
  CHECK(audit.err.find(table.filename().string()) != std::string::npos);
  // Opening it read-write names the table file, not the WAL.
  Run exec = testing::run_command(
      "echo '{\"op\": \"list_agents\", "
      "\"params\": {}}' | " +
      std::string(PARLEY_BINARY) + " exec --data " + dir.path().string() +
      " -");
  CHECK(exec.exit_code == 65);
  CHECK_MESSAGE(exec.err.find("table file " + table.filename().string() +
                              " is damaged") != std::string::npos,
                exec.err);
  CHECK(exec.err.find("WAL") == std::string::npos);
}

TEST_CASE(
    "a byte flipped anywhere in the table files never changes what a "
    "listing prints with exit 0" *
    doctest::test_suite("slow")) {
  testing::ScratchDir pristine;
  make_store(pristine.path());
  std::map<std::string, std::string> expected;
  for (const std::string& listing : kListings) {
    Run run = list(listing, pristine.path());
    REQUIRE(run.exit_code == 0);
    expected[listing] = run.out;
  }
  const std::uint64_t seed = testing::random_seed();
  MESSAGE("seed " << seed << " (rerun: PARLEY_TEST_SEED=" << seed << ")");
  std::mt19937_64 random(seed);
  int refused = 0;
  int flips = 0;
  for (const fs::path& original : table_files(pristine.path())) {
    const std::uintmax_t size = fs::file_size(original);
    for (int i = 0; i < 6; ++i) {
      testing::ScratchDir copy;
      fs::copy(
          pristine.path(), copy.path(),
          fs::copy_options::recursive | fs::copy_options::overwrite_existing);
      const std::uintmax_t offset = random() % size;
      flip_byte(copy.path() / original.filename(), offset,
                static_cast<unsigned char>(1 + random() % 255));
      ++flips;
      for (const std::string& listing : kListings) {
        CAPTURE(original.filename().string());
        CAPTURE(offset);
        CAPTURE(listing);
        Run run = list(listing, copy.path());
        if (run.exit_code == 0) {
          // `stats` names the store it read.
          std::string out = run.out;
          const std::string copy_path = copy.path().string();
          for (std::size_t at = out.find(copy_path); at != std::string::npos;
               at = out.find(copy_path, at)) {
            out.replace(at, copy_path.size(), pristine.path().string());
          }
          CHECK(out == expected[listing]);
        } else {
          CHECK(run.exit_code == 65);
          CHECK(run.out.empty());
          ++refused;
        }
      }
    }
  }
  MESSAGE(flips << " flips, " << refused << " listings refused");
}

TEST_CASE("audit reports a torn WAL tail that the next open will drop") {
  testing::ScratchDir dir;
  {
    auto opened = log::open_rocksdb_log_store(dir.path());
    REQUIRE(opened.has_value());
    for (int i = 0; i < 20; ++i) {
      std::vector<log::AppendEntry> batch{
          testing::text_entry("c1", std::to_string(i))};
      REQUIRE(opened->store->append(batch).has_value());
    }
  }
  fs::path wal;
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    if (entry.path().extension() == ".log") wal = std::max(wal, entry.path());
  }
  REQUIRE_FALSE(wal.empty());
  testing::forget_clean_close(dir.path());  // as a crash leaves it
  fs::resize_file(wal, fs::file_size(wal) - 3);
  Run audit = parley("audit --data " + dir.path().string());
  CHECK_MESSAGE(audit.out.find("torn") != std::string::npos, audit.out);
  CHECK(audit.out.find("drop") != std::string::npos);
  // The audit changed nothing: the next open finds and drops the tail.
  auto reopened = log::open_rocksdb_log_store(dir.path());
  REQUIRE(reopened.has_value());
  CHECK(reopened->recovery.torn_tail);
  CHECK(reopened->store->last_sequence() == 19);
}

// Starts `parley exec --data DIR` on a one-line script, and kills it with
// SIGKILL after `delay`.
void kill_during_exec(const fs::path& dir, const fs::path& script,
                      std::chrono::microseconds delay) {
  std::string data = dir.string();
  std::string script_arg = script.string();
  char* argv[] = {const_cast<char*>(PARLEY_BINARY),
                  const_cast<char*>("exec"),
                  const_cast<char*>("--data"),
                  data.data(),
                  script_arg.data(),
                  nullptr};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null",
                                   O_WRONLY, 0);
  pid_t child = 0;
  REQUIRE(posix_spawn(&child, PARLEY_BINARY, &actions, nullptr, argv,
                      environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  std::this_thread::sleep_for(delay);
  ::kill(child, SIGKILL);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
}

TEST_CASE("a store whose creation kill -9 interrupted is usable afterwards" *
          doctest::test_suite("slow")) {
  testing::ScratchDir dir;
  const fs::path script = dir.path() / "list.jsonl";
  std::ofstream(script) << R"({"op": "list_agents", "params": {}})" << '\n';
  const std::uint64_t seed = testing::random_seed();
  MESSAGE("seed " << seed << " (rerun: PARLEY_TEST_SEED=" << seed << ")");
  std::mt19937_64 random(seed);
  constexpr int kTrials = 100;
  for (int trial = 0; trial < kTrials; ++trial) {
    const fs::path store = dir.path() / ("store-" + std::to_string(trial));
    const auto delay = std::chrono::microseconds(random() % 40000);
    kill_during_exec(store, script, delay);
    Run run = parley("exec --data " + store.string() + " " + script.string());
    CAPTURE(trial);
    CAPTURE(delay.count());
    REQUIRE_MESSAGE(run.exit_code == 0, run.err);
    CHECK(run.out == "{\"ok\": true, \"result\": []}\n");
    fs::remove_all(store);
  }
}

}  // namespace
}  // namespace parley
