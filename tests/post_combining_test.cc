// The Committer's post combining (engine/hub/committer.h) hammered by many
// threads, blocking (apply) and asynchronous (submit) at once, posting to
// one channel and to many: every change is acknowledged exactly once, the
// log holds each once, log and channel sequences are dense, and each
// thread's changes keep their order in the log.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "engine/hub/commit.h"
#include "engine/hub/committer.h"
#include "log/memory_log_store.h"
#include "log/mutex.h"
#include "schemas/record.h"
#include "tests/test_support.h"

namespace parley {
namespace {

using engine::Change;
using engine::Commit;
using engine::Committer;
using engine::Result;
using namespace std::chrono_literals;

constexpr int kBlockingThreads = 4;
constexpr int kAsyncThreads = 4;
constexpr int kThreads = kBlockingThreads + kAsyncThreads;
constexpr int kPostsPerThread = 300;

// Runs kThreads posters, each posting kPostsPerThread one-record changes to
// channel_of(thread, post), and checks what the log holds.
void hammer(int (*channel_of)(int thread, int post)) {
  std::unique_ptr<log::LogStore> store = log::make_memory_log_store();
  log::Mutex writer;
  std::atomic<int> folded = 0;
  std::atomic<int> published = 0;
  Committer committer(
      *store, writer,
      Committer::Hooks{.fold = [&](Commit&) -> Result<void> {
                         ++folded;
                         return {};
                       },
                       .publish = [&](const Commit&) { ++published; },
                       .rehydrate = []() -> Result<void> { return {}; }});
  committer.start();

  // outcomes[thread * kPostsPerThread + post]: how often it was told, and
  // whether it succeeded.
  std::vector<std::atomic<int>> told(kThreads * kPostsPerThread);
  std::vector<std::atomic<int>> failed(kThreads * kPostsPerThread);
  auto change_for = [&](int thread, int post) {
    const std::string channel =
        "channel-" + std::to_string(channel_of(thread, post));
    const std::string text =
        std::to_string(thread) + "/" + std::to_string(post);
    return Change<int>{[channel, text, post](Commit& batch) -> Result<int> {
      batch.entries.push_back(testing::text_entry(channel, text));
      return post;
    }};
  };
  std::mutex first_error_mutex;
  std::string first_error;
  auto tell = [&](int slot, const Result<int>& result) {
    ++told[slot];
    if (!result) {
      ++failed[slot];
      std::lock_guard lock(first_error_mutex);
      if (first_error.empty()) first_error = result.error().message;
    }
  };

  std::atomic<int> ready = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready < kThreads) {
      }
      for (int p = 0; p < kPostsPerThread; ++p) {
        const int slot = t * kPostsPerThread + p;
        if (t < kBlockingThreads) {
          Result<int> result = committer.apply(change_for(t, p));
          if (result) CHECK(*result == p);
          tell(slot, result);
        } else {
          committer.submit(change_for(t, p), [&, slot](Result<int> result) {
            tell(slot, result);
          });
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  // close() refuses what is still queued: first wait for every outcome.
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  auto all_told = [&] {
    for (const std::atomic<int>& count : told) {
      if (count == 0) return false;
    }
    return true;
  };
  while (!all_told() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  committer.close();

  int never_told = 0, told_twice = 0, failures = 0;
  for (int slot = 0; slot < kThreads * kPostsPerThread; ++slot) {
    if (told[slot] == 0) ++never_told;
    if (told[slot] > 1) ++told_twice;
    if (failed[slot] != 0) ++failures;
  }
  CHECK(never_told == 0);
  CHECK(told_twice == 0);
  CHECK_MESSAGE(failures == 0, "first error: " << first_error);
  CHECK(folded == kThreads * kPostsPerThread);
  CHECK(published == kThreads * kPostsPerThread);

  // The log: each post once, sequences dense, each thread's posts in order.
  std::vector<int> next_post(kThreads, 0);
  std::map<std::string, std::uint64_t> next_in_channel;
  std::uint64_t next_log = 1;
  int out_of_order = 0, gaps = 0, records = 0;
  auto read =
      store->scan_log([&](std::uint64_t sequence, std::string_view record) {
        ++records;
        if (sequence != next_log) ++gaps;
        next_log = sequence + 1;
        auto stamped = schema::verify_record(record);
        CHECK(stamped);
        if (!stamped) return false;
        if (stamped->log_sequence != sequence) ++gaps;
        const std::string text = testing::text_of(record);
        const int thread = std::stoi(text.substr(0, text.find('/')));
        const int post = std::stoi(text.substr(text.find('/') + 1));
        if (post != next_post[thread]) ++out_of_order;
        next_post[thread] = post + 1;
        const std::string channel =
            "channel-" + std::to_string(channel_of(thread, post));
        std::uint64_t& in_channel = next_in_channel[channel];
        if (stamped->channel_sequence != in_channel + 1) ++gaps;
        in_channel = stamped->channel_sequence;
        return true;
      });
  REQUIRE(read);
  CHECK(records == kThreads * kPostsPerThread);
  CHECK(gaps == 0);
  CHECK(out_of_order == 0);
  for (int t = 0; t < kThreads; ++t) CHECK(next_post[t] == kPostsPerThread);
  CHECK(store->last_sequence() == std::uint64_t(kThreads * kPostsPerThread));
}

TEST_CASE("posts combined from many threads into one channel") {
  hammer([](int, int) { return 0; });
}

TEST_CASE("posts combined from many threads into many channels") {
  hammer([](int thread, int post) { return (thread * 3 + post) % 7; });
}

TEST_CASE("a change submitted after close is refused, told once") {
  std::unique_ptr<log::LogStore> store = log::make_memory_log_store();
  log::Mutex writer;
  Committer committer(
      *store, writer,
      Committer::Hooks{.fold = [](Commit&) -> Result<void> { return {}; },
                       .publish = [](const Commit&) {},
                       .rehydrate = []() -> Result<void> { return {}; }});
  committer.start();
  committer.close();
  int told = 0;
  committer.submit(Change<int>{[](Commit& batch) -> Result<int> {
                     batch.entries.push_back(testing::text_entry("c", "x"));
                     return 1;
                   }},
                   [&](Result<int> result) {
                     ++told;
                     CHECK(!result);
                   });
  CHECK(told == 1);
  CHECK(
      !committer.apply(Change<int>{[](Commit&) -> Result<int> { return 1; }}));
  CHECK(store->last_sequence() == 0);
}

}  // namespace
}  // namespace parley
