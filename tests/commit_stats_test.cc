// log::CommitStats: the histograms /metrics exports of a store's group
// commits.
#include "log/commit_stats.h"

#include <doctest/doctest.h>

#include <chrono>

namespace parley {
namespace {

using namespace std::chrono_literals;

TEST_CASE(
    "commit stats put a group in the first bucket whose bound holds it, "
    "cumulatively, and past the last bound only in the unbounded one") {
  log::CommitStats stats;
  stats.record(1, 100us);      // le 1 record; le 0.0001 s
  stats.record(3, 101us);      // le 4; le 0.00025
  stats.record(1024, 1s);      // le 1024; le 1
  stats.record(1025, 1001ms);  // past both last bounds

  const log::CommitStatsSnapshot snapshot = stats.snapshot();
  CHECK(snapshot.groups == 4);
  CHECK(snapshot.records == 1 + 3 + 1024 + 1025);
  CHECK(snapshot.seconds == doctest::Approx(0.0001 + 0.000101 + 1 + 1.001));
  const auto& records = snapshot.records_buckets;
  CHECK(records[0] == 1);   // le 1
  CHECK(records[1] == 1);   // le 2
  CHECK(records[2] == 2);   // le 4
  CHECK(records[9] == 2);   // le 512
  CHECK(records[10] == 3);  // le 1024
  CHECK(records[11] == 4);  // +Inf
  const auto& seconds = snapshot.seconds_buckets;
  CHECK(seconds[0] == 1);   // le 0.0001
  CHECK(seconds[1] == 2);   // le 0.00025
  CHECK(seconds[10] == 2);  // le 0.25
  CHECK(seconds[11] == 3);  // le 1
  CHECK(seconds[12] == 4);  // +Inf
}

}  // namespace
}  // namespace parley
