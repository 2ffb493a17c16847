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
  if (!created) return storage_error(created.error());
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
  std::optional<engine::Error> failure;
  auto read = store.read_channel(
      channel_id, 1, at,
      [&](std::uint64_t, std::uint64_t log_sequence, std::string_view record) {
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
  if (failure) return std::unexpected(*failure);
  if (!read) return storage_error(read.error());
  return replay;
}

}  // namespace parley::replay
