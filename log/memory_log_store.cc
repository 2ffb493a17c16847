#include "log/memory_log_store.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <unordered_map>

#include "log/record_check.h"
#include "log/sequencer.h"

namespace parley::log {
namespace {

class MemoryLogStore final : public LogStore {
 public:
  using LogStore::append;
  Result<std::vector<Position>> append(
      std::span<AppendEntry> batch,
      const SequencedCallback& on_sequenced) override {
    if (auto checked = Sequencer::check_entries(batch); !checked) {
      return std::unexpected(checked.error());
    }
    std::unique_lock lock(mutex_);
    if (closed_) return closed_error();
    auto positions = sequencer_.assign(batch, lookups_);
    if (!positions) return positions;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      AppendEntry& entry = batch[i];
      const Position& position = (*positions)[i];
      records_.push_back(entry.record);
      if (!entry.channel.empty()) {
        channels_[entry.channel].push_back(position.log_sequence);
      }
      if (!entry.idempotency_key.empty()) {
        keys_.emplace(entry.idempotency_key, position.log_sequence);
        sequencer_.key_committed(entry.idempotency_key);
      }
    }
    appended_.notify_all();
    lock.unlock();
    if (on_sequenced) on_sequenced(*positions);
    return positions;
  }

  Result<void> read(std::uint64_t from, std::uint64_t to,
                    const RecordVisitor& visit) const override {
    std::unique_lock lock(mutex_);
    if (closed_) return closed_error();
    for (std::uint64_t sequence = std::max<std::uint64_t>(from, 1);
         sequence <= std::min<std::uint64_t>(to, records_.size()); ++sequence) {
      // Copy out so the visitor may call back into the store.
      std::string record = records_[sequence - 1];
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
    std::unique_lock lock(mutex_);
    if (closed_) return closed_error();
    auto found = channels_.find(std::string(channel));
    if (found == channels_.end()) return {};
    const std::vector<std::uint64_t>& sequences = found->second;
    for (std::uint64_t channel_sequence = std::max<std::uint64_t>(from, 1);
         channel_sequence <= std::min<std::uint64_t>(to, sequences.size());
         ++channel_sequence) {
      std::uint64_t sequence = sequences[channel_sequence - 1];
      std::string record = records_[sequence - 1];
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

  Result<void> scan_log(const RecordVisitor& visit) const override {
    std::unique_lock lock(mutex_);
    if (closed_) return closed_error();
    for (std::uint64_t sequence = 1; sequence <= records_.size(); ++sequence) {
      std::string record = records_[sequence - 1];
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
    std::vector<std::pair<std::string, std::vector<std::uint64_t>>> index;
    {
      std::lock_guard lock(mutex_);
      if (closed_) return closed_error();
      index.assign(channels_.begin(), channels_.end());
    }
    std::ranges::sort(index, [](const auto& a, const auto& b) {
      return std::pair(a.first.size(), std::string_view(a.first)) <
             std::pair(b.first.size(), std::string_view(b.first));
    });
    for (const auto& [channel, sequences] : index) {
      for (std::size_t i = 0; i < sequences.size(); ++i) {
        if (!visit(channel, i + 1, sequences[i])) return {};
      }
    }
    return {};
  }

  Result<void> scan_idempotency_index(
      const IdempotencyIndexVisitor& visit) const override {
    std::map<std::string, std::uint64_t> keys;
    {
      std::lock_guard lock(mutex_);
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
    std::lock_guard lock(mutex_);
    if (closed_) return closed_error();
    auto found = keys_.find(std::string(key));
    if (found == keys_.end()) return std::nullopt;
    return found->second;
  }

  std::uint64_t last_sequence() const override {
    std::lock_guard lock(mutex_);
    return records_.size();
  }

  Result<std::uint64_t> last_channel_sequence(
      std::string_view channel) const override {
    std::lock_guard lock(mutex_);
    if (closed_) return closed_error();
    auto found = channels_.find(std::string(channel));
    return found == channels_.end() ? 0 : found->second.size();
  }

  std::uint64_t wait_for_append(
      std::uint64_t after, std::chrono::milliseconds timeout) const override {
    std::unique_lock lock(mutex_);
    appended_.wait_for(lock, timeout,
                       [&] { return closed_ || records_.size() > after; });
    return records_.size();
  }

  Result<void> close() override {
    std::lock_guard lock(mutex_);
    closed_ = true;
    appended_.notify_all();
    return {};
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable appended_;
  bool closed_ = false;
  std::vector<std::string> records_;  // records_[s - 1] has log sequence s
  std::unordered_map<std::string, std::vector<std::uint64_t>> channels_;
  std::unordered_map<std::string, std::uint64_t> keys_;
  Sequencer sequencer_{0};
  const Sequencer::Lookups lookups_{
      .last_channel_sequence =
          [this](std::string_view channel) -> Result<std::uint64_t> {
        auto found = channels_.find(std::string(channel));
        return found == channels_.end() ? 0 : found->second.size();
      },
      .key_exists = [this](std::string_view key) -> Result<bool> {
        return keys_.contains(std::string(key));
      }};
};

}  // namespace

std::unique_ptr<LogStore> make_memory_log_store() {
  return std::make_unique<MemoryLogStore>();
}

}  // namespace parley::log
