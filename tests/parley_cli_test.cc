// The parley binary, run as a user runs it: output and sysexits codes.
#include <doctest/doctest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <filesystem>

#include "log/rocksdb_log_store.h"
#include "tests/test_support.h"

namespace parley {
namespace {

struct Run {
  int exit_code;
  std::string output;  // stdout and stderr together
};

Run parley(const std::string& arguments) {
  std::string command = std::string(PARLEY_BINARY) + " " + arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  Run run{};
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) {
    run.output.append(buffer, n);
  }
  int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
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
  CHECK(run.output.find("last sequence  3\n") != std::string::npos);
  CHECK(run.output.find("records        3 Envelope\n") != std::string::npos);
  CHECK(run.output.find("torn tail      no\n") != std::string::npos);
}

TEST_CASE("log info on a missing store exits 66 and creates nothing") {
  testing::ScratchDir dir;
  Run run = parley("log info --data " + (dir.path() / "none").string());
  CHECK(run.exit_code == 66);
  CHECK(run.output.find("no Parley store") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.path() / "none"));
}

TEST_CASE("log info on a store held by another process exits 69") {
  testing::ScratchDir dir;
  auto held = log::open_rocksdb_log_store(dir.path());
  REQUIRE(held.has_value());
  Run run = parley("log info --data " + dir.path().string());
  CHECK(run.exit_code == 69);
  CHECK(run.output.find("locked") != std::string::npos);
}

TEST_CASE("a command line error exits 64") {
  CHECK(parley("").exit_code == 64);
  CHECK(parley("log info").exit_code == 64);
  CHECK(parley("no-such-command").exit_code == 64);
}

TEST_CASE("--help exits 0 and shows an example") {
  Run run = parley("log info --help");
  CHECK(run.exit_code == 0);
  CHECK(run.output.find("Example: parley log info --data") !=
        std::string::npos);
}

}  // namespace
}  // namespace parley
