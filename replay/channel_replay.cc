#include "replay/channel_replay.h"

#include <cstring>

#include "engine/records/log_records.h"
#include "parley/schemas/log_generated.h"
#include "replay/folded_store.h"

namespace parley::replay {

log::Result<std::optional<CreatedRecord>> find_channel_created(
    const log::LogStore& store, std::string_view channel_id) {
  std::optional<CreatedRecord> found;
  auto read = store.read(
      1, log::kLastSequence,
      [&](std::uint64_t sequence, std::string_view record) {
        const auto* created =
            schema::GetRecord(record.data())->body_as_ChannelCreated();
        if (!created || created->channel_id()->string_view() != channel_id) {
          return true;
        }
        found.emplace();
        found->log_sequence = sequence;
        found->size = record.size();
        found->storage.resize((record.size() + 7) / 8);
        std::memcpy(found->storage.data(), record.data(), record.size());
        return false;
      });
  if (!read) return std::unexpected(read.error());
  return found;
}

ChannelReplay::ChannelReplay()
    : adapters_(builtin_adapter_registry()),
      state_(std::make_unique<engine::HubState>(*adapters_)) {}

engine::Result<std::unique_ptr<ChannelReplay>> ChannelReplay::run(
    const log::LogStore& store, std::string_view channel_id, std::uint64_t at,
    const StepVisitor& on_step) {
  auto created = find_channel_created(store, channel_id);
  if (!created) return engine::storage_error(created.error());
  if (!*created) {
    return engine::not_found("channel not found: " + std::string(channel_id));
  }
  std::unique_ptr<ChannelReplay> replay(new ChannelReplay());
  replay->created_at_ = (*created)->log_sequence;
  if (auto applied =
          replay->state_->apply((*created)->log_sequence, (*created)->bytes());
      !applied) {
    return std::unexpected(applied.error());
  }
  replay->channel_ = replay->state_->channels.find(channel_id);
  if (!replay->channel_) {
    return engine::not_found("channel not found: " + std::string(channel_id));
  }
  if (at == 0) return replay;
  // The channel's ExpectationFired records (a hide handler's hides fold
  // from them; the channel index does not hold them), folded in log order
  // among its envelopes.
  struct Fired {
    std::uint64_t log_sequence;
    std::vector<std::uint64_t> storage;  // 8-byte aligned
    std::size_t size;
  };
  std::vector<Fired> fired;
  auto scanned = store.read(
      replay->created_at_ + 1, log::kLastSequence,
      [&](std::uint64_t sequence, std::string_view record) {
        const auto* expectation =
            schema::GetRecord(record.data())->body_as_ExpectationFired();
        if (expectation &&
            expectation->channel_id()->string_view() == channel_id) {
          std::vector<std::uint64_t> storage((record.size() + 7) / 8);
          std::memcpy(storage.data(), record.data(), record.size());
          fired.push_back({sequence, std::move(storage), record.size()});
        }
        return true;
      });
  if (!scanned) return engine::storage_error(scanned.error());
  std::optional<engine::Error> failure;
  auto next_fired = fired.begin();
  // Folds the fired records logged before `before`.
  auto apply_fired = [&](std::uint64_t before) {
    for (; !failure && next_fired != fired.end() &&
           next_fired->log_sequence < before;
         ++next_fired) {
      const std::string_view bytes(
          reinterpret_cast<const char*>(next_fired->storage.data()),
          next_fired->size);
      if (auto applied = replay->state_->apply(next_fired->log_sequence, bytes);
          !applied) {
        failure = applied.error();
      }
    }
    return !failure;
  };
  bool past_at = false;
  auto read = store.read_channel(
      channel_id, 1, log::kLastSequence,
      [&](std::uint64_t channel_sequence, std::uint64_t log_sequence,
          std::string_view record) {
        if (!apply_fired(log_sequence)) return false;
        if (channel_sequence > at) {
          past_at = true;
          return false;
        }
        if (auto applied = replay->state_->apply(log_sequence, record);
            !applied) {
          failure = applied.error();
          return false;
        }
        if (on_step) {
          if (auto envelope = engine::decode_envelope(record)) {
            on_step(*envelope, *replay->channel_);
          }
        }
        return true;
      });
  if (read && !past_at) apply_fired(log::kLastSequence);
  if (failure) return std::unexpected(*failure);
  if (!read) return engine::storage_error(read.error());
  return replay;
}

}  // namespace parley::replay
