// Real crashes: a child appends with sync durability and is killed with
// SIGKILL at a random moment; every append it saw acked must survive.
#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <random>
#include <sstream>

#include "log/rocksdb_log_store.h"
#include "tests/test_support.h"

namespace parley {
namespace {

using testing::text_of;

constexpr int kIterations = 50;

struct Acked {
  std::uint64_t sequence;
  std::string text;
};

// Runs crash_appender on `dir` until roughly `run_for` after it is ready,
// then kills it with SIGKILL. Returns every line it acked.
std::vector<Acked> run_and_kill(const std::filesystem::path& dir,
                                int generation, int threads,
                                std::chrono::milliseconds run_for) {
  int out[2];
  REQUIRE(pipe(out) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  std::string dir_arg = dir.string();
  std::string generation_arg = std::to_string(generation);
  std::string threads_arg = std::to_string(threads);
  char* argv[] = {const_cast<char*>(PARLEY_CRASH_APPENDER), dir_arg.data(),
                  generation_arg.data(), threads_arg.data(), nullptr};
  pid_t child = 0;
  REQUIRE(posix_spawn(&child, PARLEY_CRASH_APPENDER, &actions, nullptr, argv,
                      environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);

  std::string output;
  char buffer[4096];
  auto read_some = [&] {
    ssize_t n = read(out[0], buffer, sizeof buffer);
    if (n > 0) output.append(buffer, n);
    return n;
  };
  while (output.find("ready\n") == std::string::npos && read_some() > 0) {
  }
  REQUIRE_MESSAGE(output.starts_with("ready\n"), "child output: " << output);
  auto deadline = std::chrono::steady_clock::now() + run_for;
  while (std::chrono::steady_clock::now() < deadline && read_some() > 0) {
  }
  kill(child, SIGKILL);
  while (read_some() > 0) {
  }
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE_MESSAGE(WIFSIGNALED(status), "child exited by itself: " << output);

  std::vector<Acked> acked;
  std::istringstream lines(output.substr(6));
  Acked line;
  while (lines >> line.sequence >> line.text) acked.push_back(line);
  return acked;
}

TEST_SUITE("slow") {
  TEST_CASE("every acked append survives kill -9, once, in order, densely") {
    std::uint32_t seed = std::random_device{}();
    MESSAGE("crash test seed " << seed);
    INFO("seed " << seed);
    std::mt19937 random(seed);
    testing::ScratchDir dir;
    std::map<std::uint64_t, std::string> all_acked;
    int torn_tails = 0;

    for (int generation = 0; generation < kIterations; ++generation) {
      INFO("generation " << generation);
      int threads = std::uniform_int_distribution(1, 4)(random);
      auto run_for = std::chrono::milliseconds(
          std::uniform_int_distribution(0, 150)(random));
      for (const Acked& acked :
           run_and_kill(dir.path(), generation, threads, run_for)) {
        all_acked[acked.sequence] = acked.text;
      }

      auto opened = log::open_rocksdb_log_store(dir.path());
      REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
      torn_tails += opened->recovery.torn_tail;
      log::LogStore& store = *opened->store;
      REQUIRE(store.last_sequence() >=
              (all_acked.empty() ? 0 : all_acked.rbegin()->first));

      // Dense and in order: read() fails on any gap or mis-stamped record.
      std::vector<std::string> texts;
      auto read = store.read(1, log::kLastSequence,
                             [&](std::uint64_t, std::string_view record) {
                               texts.push_back(text_of(record));
                               return true;
                             });
      REQUIRE_MESSAGE(read.has_value(), testing::error_message(read));
      REQUIRE(texts.size() == store.last_sequence());
      for (const auto& item : all_acked) {
        // Not bindings: a lambda captures them, which clang 14 cannot.
        const auto& sequence = item.first;
        const auto& text = item.second;
        REQUIRE_MESSAGE(texts[sequence - 1] == text,
                        "log sequence " << sequence);
      }
      // Each thread's counters appear once each, in order, with no gap.
      std::map<std::string, long> next_counter;
      for (const std::string& text : texts) {
        auto colon = text.rfind(':');
        std::string writer = text.substr(0, colon);
        long counter = std::stol(text.substr(colon + 1));
        REQUIRE_MESSAGE(counter == next_counter[writer]++, "record " << text);
      }
    }
    MESSAGE(all_acked.size()
            << " acked appends across " << kIterations << " kills; "
            << torn_tails << " reopens found a torn tail");
  }
}

}  // namespace
}  // namespace parley
