// A LogStore that hands every call to the store it holds: the base of the
// stores that stand in for another and change one or two of its calls.
//
// Thread safety: as the store held; `store_` is set before the first call
// (a subclass that replaces it says when it may).
#pragma once

#include <memory>

#include "log/log_store.h"

namespace parley::log {

class ForwardingLogStore : public LogStore {
 public:
  explicit ForwardingLogStore(std::shared_ptr<LogStore> store)
      : store_(std::move(store)) {}

  using LogStore::append;
  Result<std::vector<Position>> append(
      std::span<AppendEntry> batch,
      const SequencedCallback& on_sequenced) override {
    return store_->append(batch, on_sequenced);
  }
  Result<void> append_deferred(std::span<AppendEntry> batch,
                               DurableCallback on_durable) override {
    return store_->append_deferred(batch, std::move(on_durable));
  }
  Result<void> flush() override { return store_->flush(); }
  Result<void> resume() override { return store_->resume(); }
  Result<void> read(std::uint64_t from, std::uint64_t to,
                    const RecordVisitor& visit) const override {
    return store_->read(from, to, visit);
  }
  Result<void> read_channel(std::string_view channel, std::uint64_t from,
                            std::uint64_t to,
                            const ChannelVisitor& visit) const override {
    return store_->read_channel(channel, from, to, visit);
  }
  Result<void> scan_log(const RecordVisitor& visit) const override {
    return store_->scan_log(visit);
  }
  Result<void> scan_channel_index(
      const ChannelIndexVisitor& visit) const override {
    return store_->scan_channel_index(visit);
  }
  Result<void> scan_idempotency_index(
      const IdempotencyIndexVisitor& visit) const override {
    return store_->scan_idempotency_index(visit);
  }
  Result<std::optional<std::uint64_t>> find_idempotency_key(
      std::string_view key) const override {
    return store_->find_idempotency_key(key);
  }
  std::uint64_t cache_bytes() const override { return store_->cache_bytes(); }
  CommitStatsSnapshot commit_stats() const override {
    return store_->commit_stats();
  }
  std::uint64_t last_sequence() const override {
    return store_->last_sequence();
  }
  Result<std::uint64_t> last_channel_sequence(
      std::string_view channel) const override {
    return store_->last_channel_sequence(channel);
  }
  std::uint64_t wait_for_append(
      std::uint64_t after, std::chrono::milliseconds timeout) const override {
    return store_->wait_for_append(after, timeout);
  }
  Result<void> close() override { return store_->close(); }

 protected:
  std::shared_ptr<LogStore> store_;
};

}  // namespace parley::log
