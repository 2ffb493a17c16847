#include "engine/state/log_prefetcher.h"

#include <cstring>
#include <functional>
#include <utility>

#include "log/thread_name.h"

namespace parley::engine {

void LogPrefetcher::Batch::add(std::uint64_t log_sequence,
                               std::string_view record) {
  const std::size_t offset = storage_.size();
  storage_.resize(offset + (record.size() + 7) / 8);
  std::memcpy(storage_.data() + offset, record.data(), record.size());
  index_.push_back({log_sequence, offset * 8, record.size()});
}

LogPrefetcher::LogPrefetcher(const log::LogStore& store, std::uint64_t first)
    : store_(store), first_(first) {
  const std::uint64_t last = store.last_sequence();
  if (last < first || last - first < std::uint64_t{kBatchRecords}) {
    return;  // one batch at most: next() reads it
  }
  reader_ = std::thread([this] {
    log::name_current_thread("parley-hydrate");
    run();
  });
}

LogPrefetcher::~LogPrefetcher() {
  if (!reader_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  changed_.notify_all();
  reader_.join();
}

bool LogPrefetcher::hand_over(Batch& batch) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return stopped_ || ready_.size() < kDepth; });
  if (stopped_) return false;
  ready_.push_back(std::move(batch));
  batch = Batch{};
  changed_.notify_all();
  return true;
}

log::Result<void> LogPrefetcher::read_batches(
    const std::function<bool(Batch&)>& deliver) {
  Batch batch;
  auto read =
      store_.read(first_, log::kLastSequence,
                  [&](std::uint64_t log_sequence, std::string_view record) {
                    batch.add(log_sequence, record);
                    return batch.size() < kBatchRecords || deliver(batch);
                  });
  if (read && batch.size() > 0) deliver(batch);
  return read;
}

void LogPrefetcher::run() {
  auto read = read_batches([this](Batch& batch) { return hand_over(batch); });
  std::lock_guard lock(mutex_);
  result_ = std::move(read);
  done_ = true;
  changed_.notify_all();
}

// The log may have grown since the constructor looked: whatever it holds
// now is read, without a depth limit.
void LogPrefetcher::read_here() {
  result_ = read_batches([this](Batch& batch) {
    ready_.push_back(std::exchange(batch, Batch{}));
    return true;
  });
  done_ = true;
}

std::optional<LogPrefetcher::Batch> LogPrefetcher::next() {
  std::unique_lock lock(mutex_);
  if (!reader_.joinable() && !done_) read_here();
  changed_.wait(lock, [&] { return done_ || !ready_.empty(); });
  if (ready_.empty()) return std::nullopt;
  Batch batch = std::move(ready_.front());
  ready_.pop_front();
  changed_.notify_all();
  return batch;
}

log::Result<void> LogPrefetcher::result() {
  std::lock_guard lock(mutex_);
  return result_;
}

}  // namespace parley::engine
