// WakeFlag (log/wake_flag.h) hammered by many threads: every waiter
// returns once the flag is set, sees what the setter wrote before set(),
// and may destroy the flag the moment its wait returns.
#include "log/wake_flag.h"

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace parley {
namespace {

using log::WakeFlag;

TEST_CASE("a flag set before wait() lets it return at once") {
  WakeFlag flag;
  CHECK(!flag.is_set());
  flag.set();
  CHECK(flag.is_set());
  flag.wait();
  flag.set();  // setting again changes nothing
  flag.wait();
}

TEST_CASE("every waiter wakes and sees what was written before set()") {
  constexpr int kRounds = 300;
  constexpr int kWaiters = 8;
  for (int round = 0; round < kRounds; ++round) {
    WakeFlag flag;
    int payload = 0;  // plain memory: set() must publish it
    std::atomic<int> woke = 0;
    std::atomic<int> wrong = 0;
    std::vector<std::thread> waiters;
    for (int w = 0; w < kWaiters; ++w) {
      waiters.emplace_back([&] {
        flag.wait();
        if (payload != round + 1) ++wrong;
        ++woke;
      });
    }
    std::thread setter([&] {
      payload = round + 1;
      flag.set();
    });
    setter.join();
    for (std::thread& waiter : waiters) waiter.join();
    REQUIRE(woke == kWaiters);
    REQUIRE(wrong == 0);
  }
}

// A group commit's waiter frees its request (and the flag in it) as soon
// as wait() returns, while the leader may still be inside set().
TEST_CASE("a waiter may destroy the flag as soon as its wait returns") {
  constexpr int kRounds = 2000;
  std::atomic<WakeFlag*> handed = nullptr;
  std::atomic<bool> stop = false;
  std::thread setter([&] {
    while (!stop) {
      WakeFlag* flag = handed.exchange(nullptr);
      if (flag != nullptr) flag->set();
    }
  });
  for (int round = 0; round < kRounds; ++round) {
    auto flag = std::make_unique<WakeFlag>();
    handed = flag.get();
    flag->wait();
    flag.reset();
  }
  stop = true;
  setter.join();
  CHECK(handed.load() == nullptr);
}

}  // namespace
}  // namespace parley
