#include "engine/state/log_prefetcher.h"

#include <cstring>

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
    : reader_([this, &store, first] {
        log::name_current_thread("parley-hydrate");
        run(store, first);
      }) {}

LogPrefetcher::~LogPrefetcher() {
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

void LogPrefetcher::run(const log::LogStore& store, std::uint64_t first) {
  Batch batch;
  auto read =
      store.read(first, log::kLastSequence,
                 [&](std::uint64_t log_sequence, std::string_view record) {
                   batch.add(log_sequence, record);
                   return batch.size() < kBatchRecords || hand_over(batch);
                 });
  if (read && batch.size() > 0) hand_over(batch);
  std::lock_guard lock(mutex_);
  result_ = std::move(read);
  done_ = true;
  changed_.notify_all();
}

std::optional<LogPrefetcher::Batch> LogPrefetcher::next() {
  std::unique_lock lock(mutex_);
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
