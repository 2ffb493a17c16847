// The server-wide budget of request bytes in flight, without sockets: when
// it is spent, and whom a release wakes.
#include "engine/transport/request_budget.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace parley {
namespace {

using transport::RequestBudget;

TEST_CASE("a request budget is spent from its limit on, and not below it") {
  RequestBudget budget(100);
  budget.take(99);
  CHECK_FALSE(budget.spent());
  budget.take(1);
  CHECK(budget.spent());
  budget.take(500);  // one request may overshoot: it is counted whole
  CHECK(budget.bytes() == 600);
  budget.release(501);
  CHECK_FALSE(budget.spent());
  CHECK(budget.bytes() == 99);
}

TEST_CASE(
    "a release wakes the waiters once, and only when it leaves the budget "
    "below its limit") {
  RequestBudget budget(100);
  budget.take(300);
  int woken = 0;
  budget.wait([&] { ++woken; });
  budget.wait([&] { ++woken; });
  budget.release(100);  // 200: still spent
  CHECK(woken == 0);
  budget.release(150);  // 50
  CHECK(woken == 2);
  budget.take(10);
  budget.release(10);  // nobody waits any more
  CHECK(woken == 2);
}

TEST_CASE(
    "a waiter that looks at the budget again after waiting never misses a "
    "release made at the same time") {
  // The pattern a connection follows: wait, then look at spent(); whoever
  // wins the exchange of the paused mark goes on. Run many times over two
  // threads, exactly one of the two must resume, every time.
  for (int round = 0; round < 2000; ++round) {
    RequestBudget budget(10);
    budget.take(10);
    std::atomic<bool> paused = true;
    std::atomic<int> resumed = 0;
    std::thread releaser([&] { budget.release(10); });
    budget.wait([&] {
      if (paused.exchange(false)) ++resumed;
    });
    if (!budget.spent() && paused.exchange(false)) ++resumed;
    releaser.join();
    REQUIRE(resumed == 1);
  }
}

}  // namespace
}  // namespace parley
