// What a store's group commits did, for monitoring (the admin port's
// /metrics): how many records each group carried and how long its write
// took, its sync included, as Prometheus-style cumulative histograms.
//
// Thread safety: record() and snapshot() are safe from any thread; a
// snapshot taken during a record() may count that group in some fields
// and not yet in others.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace parley::log {

// Upper bounds of the histograms' buckets; a last, unbounded bucket
// follows each.
inline constexpr std::array<std::uint64_t, 11> kGroupRecordBounds = {
    1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
inline constexpr std::array<double, 12> kGroupSecondsBounds = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
    0.01,   0.025,   0.05,   0.1,   0.25,   1.0};

struct CommitStatsSnapshot {
  std::uint64_t groups = 0;   // groups written (failed writes excluded)
  std::uint64_t records = 0;  // records they carried
  double seconds = 0;         // their write and sync time, summed
  // [i]: groups of at most kGroupRecordBounds[i] records; the last entry
  // counts every group (cumulative, as Prometheus' buckets are).
  std::array<std::uint64_t, kGroupRecordBounds.size() + 1> records_buckets{};
  // [i]: groups written in at most kGroupSecondsBounds[i] seconds; the
  // last entry counts every group.
  std::array<std::uint64_t, kGroupSecondsBounds.size() + 1> seconds_buckets{};
};

class CommitStats {
 public:
  // One group of `records` written (and synced) in `took`.
  void record(std::size_t records, std::chrono::nanoseconds took);
  CommitStatsSnapshot snapshot() const;

 private:
  std::atomic<std::uint64_t> records_ = 0;
  std::atomic<std::uint64_t> nanoseconds_ = 0;
  // Not cumulative here: [i] counts the groups in bucket i alone.
  std::array<std::atomic<std::uint64_t>, kGroupRecordBounds.size() + 1>
      records_buckets_{};
  std::array<std::atomic<std::uint64_t>, kGroupSecondsBounds.size() + 1>
      seconds_buckets_{};
};

}  // namespace parley::log
