#include "engine/channels/channel.h"

#include <algorithm>

namespace parley::engine {

std::string_view to_string(ChannelState state) {
  switch (state) {
    case ChannelState::kPending:
      return "pending";
    case ChannelState::kActive:
      return "active";
    case ChannelState::kClosing:
      return "closing";
    case ChannelState::kClosed:
      return "closed";
    case ChannelState::kExpired:
      return "expired";
  }
  return "pending";
}

std::optional<ChannelState> channel_state_from(std::string_view text) {
  for (auto state :
       {ChannelState::kPending, ChannelState::kActive, ChannelState::kClosing,
        ChannelState::kClosed, ChannelState::kExpired}) {
    if (to_string(state) == text) return state;
  }
  return std::nullopt;
}

bool ChannelMetadata::has_participant(std::string_view agent_id) const {
  return std::ranges::any_of(participants, [&](const Participant& p) {
    return p.agent_id == agent_id;
  });
}

const Participant* ChannelMetadata::find_role(std::string_view role) const {
  auto it = std::ranges::find_if(
      participants, [&](const Participant& p) { return p.role == role; });
  return it == participants.end() ? nullptr : &*it;
}

}  // namespace parley::engine
