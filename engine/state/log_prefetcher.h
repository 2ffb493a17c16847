// Reads a store's whole log on a thread of its own while one consumer
// folds it: RocksDB iteration and record verification overlap the fold
// (hydrate). Records are handed out in batches, copied to 8-byte aligned
// storage so FlatBuffers can read them in place, at most kDepth batches
// ahead of the consumer. A log that fits in one batch (every test's, every
// small store's) is read by the first next() on the consumer's thread: the
// consumer would wait for that whole batch anyway, so a reader thread
// would only cost its start and join.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include "log/log_store.h"

namespace parley::engine {

class LogPrefetcher {
 public:
  class Batch {
   public:
    std::size_t size() const { return index_.size(); }
    std::uint64_t log_sequence(std::size_t i) const {
      return index_[i].log_sequence;
    }
    // Valid while the batch lives; starts on an 8-byte boundary.
    std::string_view record(std::size_t i) const {
      return {reinterpret_cast<const char*>(storage_.data()) + index_[i].offset,
              index_[i].size};
    }

   private:
    friend class LogPrefetcher;
    struct Entry {
      std::uint64_t log_sequence;
      std::size_t offset;
      std::size_t size;
    };
    void add(std::uint64_t log_sequence, std::string_view record);

    std::vector<std::uint64_t> storage_;
    std::vector<Entry> index_;
  };

  // Starts reading `store` (records first..last) at once, or at the first
  // next() when they fit one batch. `store` must outlive the prefetcher.
  explicit LogPrefetcher(const log::LogStore& store, std::uint64_t first = 1);
  LogPrefetcher(const LogPrefetcher&) = delete;
  LogPrefetcher& operator=(const LogPrefetcher&) = delete;
  // Stops the reader early if the consumer did not drain it.
  ~LogPrefetcher();

  // The next batch in log order; nullopt once the log is read (or the read
  // failed: see result()).
  std::optional<Batch> next();
  // How the read ended; call after next() returned nullopt.
  log::Result<void> result();

 private:
  static constexpr std::size_t kBatchRecords = 4096;
  static constexpr std::size_t kDepth = 4;

  // Reads the log in batches of kBatchRecords, each given to `deliver`
  // (which takes it, or returns false to stop the read).
  log::Result<void> read_batches(const std::function<bool(Batch&)>& deliver);
  void run();
  void read_here();              // with mutex_ held, no reader thread
  bool hand_over(Batch& batch);  // false when the consumer went away

  const log::LogStore& store_;
  const std::uint64_t first_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> ready_;
  bool done_ = false;
  bool stopped_ = false;
  log::Result<void> result_;
  std::thread reader_;  // not joinable when next() reads
};

}  // namespace parley::engine
