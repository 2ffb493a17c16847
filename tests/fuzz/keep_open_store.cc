#include "tests/fuzz/keep_open_store.h"

namespace parley::fuzz {
namespace {

class KeepOpenStore final : public log::LogStore {
 public:
  explicit KeepOpenStore(std::shared_ptr<log::LogStore> inner)
      : inner_(std::move(inner)) {}

  log::Result<std::vector<log::Position>> append(
      std::span<log::AppendEntry> batch,
      const SequencedCallback& on_sequenced) override {
    return inner_->append(batch, on_sequenced);
  }
  log::Result<std::vector<log::Position>> append_deferred(
      std::span<log::AppendEntry> batch, DurableCallback on_durable) override {
    return inner_->append_deferred(batch, std::move(on_durable));
  }
  log::Result<void> flush() override { return inner_->flush(); }
  log::Result<void> resume() override { return inner_->resume(); }
  log::Result<void> read(std::uint64_t from, std::uint64_t to,
                         const log::RecordVisitor& visit) const override {
    return inner_->read(from, to, visit);
  }
  log::Result<void> read_channel(
      std::string_view channel, std::uint64_t from, std::uint64_t to,
      const log::ChannelVisitor& visit) const override {
    return inner_->read_channel(channel, from, to, visit);
  }
  log::Result<void> scan_log(const log::RecordVisitor& visit) const override {
    return inner_->scan_log(visit);
  }
  log::Result<void> scan_channel_index(
      const log::ChannelIndexVisitor& visit) const override {
    return inner_->scan_channel_index(visit);
  }
  log::Result<void> scan_idempotency_index(
      const log::IdempotencyIndexVisitor& visit) const override {
    return inner_->scan_idempotency_index(visit);
  }
  log::Result<std::optional<std::uint64_t>> find_idempotency_key(
      std::string_view key) const override {
    return inner_->find_idempotency_key(key);
  }
  std::uint64_t last_sequence() const override {
    return inner_->last_sequence();
  }
  log::Result<std::uint64_t> last_channel_sequence(
      std::string_view channel) const override {
    return inner_->last_channel_sequence(channel);
  }
  std::uint64_t wait_for_append(
      std::uint64_t after, std::chrono::milliseconds timeout) const override {
    return inner_->wait_for_append(after, timeout);
  }
  log::Result<void> close() override { return {}; }

 private:
  std::shared_ptr<log::LogStore> inner_;
};

}  // namespace

std::shared_ptr<log::LogStore> keep_open(std::shared_ptr<log::LogStore> inner) {
  return std::make_shared<KeepOpenStore>(std::move(inner));
}

}  // namespace parley::fuzz
