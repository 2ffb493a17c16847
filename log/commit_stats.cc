#include "log/commit_stats.h"

#include <algorithm>

namespace parley::log {
namespace {

template <class Bounds, class Value>
std::size_t bucket_of(const Bounds& bounds, Value value) {
  return static_cast<std::size_t>(std::ranges::lower_bound(bounds, value) -
                                  bounds.begin());
}

// Cumulative counts from per-bucket ones.
template <class Counts, class Out>
void accumulate(const Counts& counts, Out& out) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    sum += counts[i].load(std::memory_order_relaxed);
    out[i] = sum;
  }
}

}  // namespace

void CommitStats::record(std::size_t records, std::chrono::nanoseconds took) {
  constexpr auto relaxed = std::memory_order_relaxed;
  const double seconds = std::chrono::duration<double>(took).count();
  records_buckets_[bucket_of(kGroupRecordBounds, records)].fetch_add(1,
                                                                     relaxed);
  seconds_buckets_[bucket_of(kGroupSecondsBounds, seconds)].fetch_add(1,
                                                                      relaxed);
  records_.fetch_add(records, relaxed);
  nanoseconds_.fetch_add(static_cast<std::uint64_t>(took.count()), relaxed);
}

CommitStatsSnapshot CommitStats::snapshot() const {
  constexpr auto relaxed = std::memory_order_relaxed;
  CommitStatsSnapshot out;
  out.records = records_.load(relaxed);
  out.seconds = static_cast<double>(nanoseconds_.load(relaxed)) / 1e9;
  accumulate(records_buckets_, out.records_buckets);
  accumulate(seconds_buckets_, out.seconds_buckets);
  out.groups = out.records_buckets.back();
  return out;
}

}  // namespace parley::log
