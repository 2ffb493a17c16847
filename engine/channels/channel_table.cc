#include "engine/channels/channel_table.h"

#include <algorithm>

#include "engine/base/event_types.h"

namespace parley::engine {

namespace {

bool erase_id(std::vector<std::string>& ids, std::string_view id) {
  auto it = std::ranges::find(ids, id);
  if (it == ids.end()) return false;
  ids.erase(it);
  return true;
}

void terminate(ChannelEntry& channel, ChannelState state,
               const LoggedEnvelope& envelope) {
  channel.metadata.state = state;
  channel.metadata.close_reason = std::string(envelope.close_reason);
  channel.metadata.closed_at = std::string(envelope.created_at);
}

void fold_lifecycle(ChannelEntry& channel, const LoggedEnvelope& envelope) {
  ChannelMetadata& metadata = channel.metadata;
  const std::string_view type = envelope.view.event_type;
  const std::string_view sender = envelope.view.sender_id;
  if (metadata.state == ChannelState::kPending) {
    if (type == event_type::kChannelInviteAck) {
      erase_id(metadata.pending_acks, sender);
      return;
    }
    if (type == event_type::kChannelInviteReject) {
      erase_id(metadata.pending_acks, sender);
      if (std::ranges::find(metadata.rejected_by, sender) ==
          metadata.rejected_by.end()) {
        metadata.rejected_by.emplace_back(sender);
      }
      return;
    }
  }
  if (!envelope.hub_authored || is_terminal(metadata.state)) return;
  if (type == event_type::kChannelOpened) {
    if (metadata.state == ChannelState::kPending) {
      metadata.state = ChannelState::kActive;
    }
  } else if (type == event_type::kChannelClosed) {
    terminate(channel, ChannelState::kClosed, envelope);
  } else if (type == event_type::kChannelExpired) {
    terminate(channel, ChannelState::kExpired, envelope);
  }
}

}  // namespace

ChannelEntry& ChannelTable::add(ChannelEntry entry) {
  auto& slot = channels_[entry.metadata.channel_id];
  if (slot) {
    *slot = std::move(entry);
  } else {
    slot = std::make_unique<ChannelEntry>(std::move(entry));
    order_.push_back(slot.get());
  }
  return *slot;
}

ChannelEntry* ChannelTable::find(std::string_view channel_id) {
  auto it = channels_.find(channel_id);
  return it == channels_.end() ? nullptr : it->second.get();
}

const ChannelEntry* ChannelTable::find(std::string_view channel_id) const {
  auto it = channels_.find(channel_id);
  return it == channels_.end() ? nullptr : it->second.get();
}

void ChannelTable::apply_envelope(ChannelEntry& channel,
                                  const LoggedEnvelope& envelope) {
  channel.last_sequence = envelope.sequence;
  fold_lifecycle(channel, envelope);
  if (channel.adapter) channel.adapter->fold(envelope.view, *channel.state);
  if (is_terminal(channel.metadata.state)) {
    channel.causation.clear();
    channel.activity = ChannelActivity();
    return;
  }
  channel.activity.fold(envelope.view.sender_id, envelope.view.event_type,
                        envelope.created_at, envelope.audience,
                        envelope.sequence);
  if (envelope.causation_id && !envelope.view.envelope_id.empty()) {
    channel.causation.insert_or_assign(
        std::pair{std::string(envelope.view.sender_id),
                  std::string(*envelope.causation_id)},
        envelope.sequence);
  }
}

}  // namespace parley::engine
