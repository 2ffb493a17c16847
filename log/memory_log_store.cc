#include "log/memory_log_store.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <unordered_map>

#include "log/mutex.h"
#include "log/record_check.h"
#include "log/sequencer.h"

namespace parley::log {
namespace {

// Keeps its records in memory, numbered after those of `base` (if any),
// which it reads through but never writes.
class MemoryLogStore final : public LogStore {
 public:
  explicit MemoryLogStore(const LogStore* base)
      : base_(base),
        base_last_(base ? base->last_sequence() : 0),
        sequencer_(base_last_) {}

  using LogStore::append;
  Result<std::vector<Position>> append(
      std::span<AppendEntry> batch,
      const SequencedCallback& on_sequenced) override {
    if (auto checked = Sequencer::check_entries(batch); !checked) {
      return std::unexpected(checked.error());
    }
    MutexLock lock(mutex_);
    if (closed_) return closed_error();
    if (auto assigned = sequencer_.assign(batch, lookups_); !assigned) {
      return std::unexpected(assigned.error());
    }
    Sequencer::stamp_checksums(batch);
    for (const AppendEntry& entry : batch) {
      records_.push_back(entry.record);
      if (!entry.channel.empty()) {
        channels_[entry.channel].push_back(entry.position.log_sequence);
      }
      if (!entry.idempotency_key.empty()) {
        keys_.emplace(entry.idempotency_key, entry.position.log_sequence);
        sequencer_.key_committed(entry.idempotency_key);
      }
    }
    appended_.notify_all();
    lock.unlock();
    if (on_sequenced) on_sequenced();
    return positions_of(batch);
  }

  Result<void> read(std::uint64_t from, std::uint64_t to,
                    const RecordVisitor& visit) const override {
    if (auto open = check_open(); !open) return open;
    from = std::max<std::uint64_t>(from, 1);
    if (base_ && from <= base_last_) {
      bool stopped = false;
      auto read = base_->read(from, std::min(to, base_last_),
                              [&](std::uint64_t sequence, std::string_view r) {
                                stopped = !visit(sequence, r);
                                return !stopped;
                              });
      if (!read || stopped) return read;
      from = base_last_ + 1;
    }
    MutexLock lock(mutex_);
    if (closed_) return closed_error();
    for (std::uint64_t sequence = from;
         sequence <= std::min<std::uint64_t>(to, last_sequence_locked());
         ++sequence) {
      // Copy out so the visitor may call back into the store.
      std::string record = records_[sequence - base_last_ - 1];
      lock.unlock();
      if (auto checked = check_record(record, sequence); !checked) {
        return checked;
      }
      if (!visit(sequence, record)) return {};
      lock.lock();
      if (closed_) return closed_error();
    }
    return {};
  }

  Result<void> read_channel(std::string_view channel, std::uint64_t from,
                            std::uint64_t to,
                            const ChannelVisitor& visit) const override {
    if (auto open = check_open(); !open) return open;
    from = std::max<std::uint64_t>(from, 1);
    auto in_base = base_channel_last(channel);
    if (!in_base) return std::unexpected(in_base.error());
    if (from <= *in_base) {
      bool stopped = false;
      auto read = base_->read_channel(
          channel, from, std::min(to, *in_base),
          [&](std::uint64_t channel_sequence, std::uint64_t sequence,
              std::string_view record) {
            stopped = !visit(channel_sequence, sequence, record);
            return !stopped;
          });
      if (!read || stopped) return read;
      from = *in_base + 1;
    }
    MutexLock lock(mutex_);
    if (closed_) return closed_error();
    auto found = channels_.find(std::string(channel));
    if (found == channels_.end()) return {};
    const std::vector<std::uint64_t>& sequences = found->second;
    for (std::uint64_t channel_sequence = from;
         channel_sequence <=
         std::min<std::uint64_t>(to, *in_base + sequences.size());
         ++channel_sequence) {
      std::uint64_t sequence = sequences[channel_sequence - *in_base - 1];
      std::string record = records_[sequence - base_last_ - 1];
      lock.unlock();
      if (auto checked = check_record(record, sequence, channel_sequence);
          !checked) {
        return checked;
      }
      if (!visit(channel_sequence, sequence, record)) return {};
      lock.lock();
      if (closed_) return closed_error();
    }
    return {};
  }

  // An overlay's scans visit its base's entries, then its own.
  Result<void> scan_log(const RecordVisitor& visit) const override {
    if (auto open = check_open(); !open) return open;
    if (base_) {
      bool stopped = false;
      auto scanned = base_->scan_log([&](std::uint64_t sequence, auto record) {
        stopped = !visit(sequence, record);
        return !stopped;
      });
      if (!scanned || stopped) return scanned;
    }
    MutexLock lock(mutex_);
    if (closed_) return closed_error();
    for (std::uint64_t sequence = base_last_ + 1;
         sequence <= last_sequence_locked(); ++sequence) {
      std::string record = records_[sequence - base_last_ - 1];
      lock.unlock();
      if (!visit(sequence, record)) return {};
      lock.lock();
      if (closed_) return closed_error();
    }
    return {};
  }

  // Channels in the RocksDB backend's key order (id length, then bytes).
  Result<void> scan_channel_index(
      const ChannelIndexVisitor& visit) const override {
    if (auto open = check_open(); !open) return open;
    if (base_) {
      bool stopped = false;
      auto scanned = base_->scan_channel_index(
          [&](std::string_view channel, std::uint64_t channel_sequence,
              std::uint64_t sequence) {
            stopped = !visit(channel, channel_sequence, sequence);
            return !stopped;
          });
      if (!scanned || stopped) return scanned;
    }
    std::vector<std::pair<std::string, std::vector<std::uint64_t>>> index;
    {
      MutexLock lock(mutex_);
      if (closed_) return closed_error();
      index.assign(channels_.begin(), channels_.end());
    }
    std::ranges::sort(index, [](const auto& a, const auto& b) {
      return std::pair(a.first.size(), std::string_view(a.first)) <
             std::pair(b.first.size(), std::string_view(b.first));
    });
    for (const auto& [channel, sequences] : index) {
      auto in_base = base_channel_last(channel);
      if (!in_base) return std::unexpected(in_base.error());
      for (std::size_t i = 0; i < sequences.size(); ++i) {
        if (!visit(channel, *in_base + i + 1, sequences[i])) return {};
      }
    }
    return {};
  }

  Result<void> scan_idempotency_index(
      const IdempotencyIndexVisitor& visit) const override {
    if (auto open = check_open(); !open) return open;
    if (base_) {
      bool stopped = false;
      auto scanned = base_->scan_idempotency_index(
          [&](std::string_view key, std::uint64_t sequence) {
            stopped = !visit(key, sequence);
            return !stopped;
          });
      if (!scanned || stopped) return scanned;
    }
    std::map<std::string, std::uint64_t> keys;
    {
      MutexLock lock(mutex_);
      if (closed_) return closed_error();
      keys.insert(keys_.begin(), keys_.end());
    }
    for (const auto& [key, sequence] : keys) {
      if (!visit(key, sequence)) return {};
    }
    return {};
  }

  Result<std::optional<std::uint64_t>> find_idempotency_key(
      std::string_view key) const override {
    {
      MutexLock lock(mutex_);
      if (closed_) return closed_error();
      auto found = keys_.find(std::string(key));
      if (found != keys_.end()) return found->second;
    }
    if (base_) return base_->find_idempotency_key(key);
    return std::nullopt;
  }

  std::uint64_t last_sequence() const override {
    MutexLock lock(mutex_);
    return last_sequence_locked();
  }

  Result<std::uint64_t> last_channel_sequence(
      std::string_view channel) const override {
    if (auto open = check_open(); !open) return std::unexpected(open.error());
    return channel_last(channel);
  }

  std::uint64_t wait_for_append(
      std::uint64_t after, std::chrono::milliseconds timeout) const override {
    MutexLock lock(mutex_);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!closed_ && last_sequence_locked() <= after) {
      if (lock.wait_until(appended_, deadline) == std::cv_status::timeout) {
        break;
      }
    }
    return last_sequence_locked();
  }

  Result<void> close() override {
    MutexLock lock(mutex_);
    closed_ = true;
    appended_.notify_all();
    return {};
  }

 private:
  Result<void> check_open() const {
    MutexLock lock(mutex_);
    if (closed_) return closed_error();
    return {};
  }

  std::uint64_t last_sequence_locked() const REQUIRES(mutex_) {
    return base_last_ + records_.size();
  }

  Result<std::uint64_t> base_channel_last(std::string_view channel) const {
    if (!base_) return 0;
    return base_->last_channel_sequence(channel);
  }

  // The channel's highest sequence, its base's and its own.
  Result<std::uint64_t> channel_last(std::string_view channel) const
      EXCLUDES(mutex_) {
    auto in_base = base_channel_last(channel);
    if (!in_base) return in_base;
    MutexLock lock(mutex_);
    auto found = channels_.find(std::string(channel));
    return *in_base + (found == channels_.end() ? 0 : found->second.size());
  }

  const LogStore* const base_;  // not owned; outlives this store
  const std::uint64_t base_last_;
  mutable Mutex mutex_;
  mutable std::condition_variable appended_;  // on mutex_: records_ grew
  bool closed_ GUARDED_BY(mutex_) = false;
  // records_[s - base_last_ - 1] has log sequence s.
  std::vector<std::string> records_ GUARDED_BY(mutex_);
  // Channel -> log sequences of its own records, in channel order after
  // the base's.
  std::unordered_map<std::string, std::vector<std::uint64_t>> channels_
      GUARDED_BY(mutex_);
  std::unordered_map<std::string, std::uint64_t> keys_ GUARDED_BY(mutex_);
  Sequencer sequencer_ GUARDED_BY(mutex_);
  // Called by sequencer_, under mutex_.
  const Sequencer::Lookups lookups_{
      .last_channel_sequence = [this](std::string_view channel)
                                   REQUIRES(mutex_) -> Result<std::uint64_t> {
        auto in_base = base_channel_last(channel);
        if (!in_base) return in_base;
        auto found = channels_.find(std::string(channel));
        return *in_base + (found == channels_.end() ? 0 : found->second.size());
      },
      .key_exists = [this](std::string_view key)
                        REQUIRES(mutex_) -> Result<bool> {
        if (keys_.contains(std::string(key))) return true;
        if (!base_) return false;
        auto found = base_->find_idempotency_key(key);
        if (!found) return std::unexpected(found.error());
        return found->has_value();
      }};
};

}  // namespace

std::unique_ptr<LogStore> make_memory_log_store() {
  return std::make_unique<MemoryLogStore>(nullptr);
}

std::unique_ptr<LogStore> make_overlay_log_store(const LogStore& base) {
  return std::make_unique<MemoryLogStore>(&base);
}

}  // namespace parley::log
