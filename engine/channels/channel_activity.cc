#include "engine/channels/channel_activity.h"

#include <utility>

#include "engine/base/event_types.h"

namespace parley::engine {

namespace {

bool is_content(std::string_view type) {
  return !type.starts_with("ag2.channel.") && !type.starts_with("ag2.task.") &&
         type != event_type::kExpectationViolated;
}

// The later of two marks in log order; nullptr when both are absent.
const ActivityMark* later(const ActivityMark* a, const ActivityMark* b) {
  if (!a) return b;
  if (!b) return a;
  return a->sequence >= b->sequence ? a : b;
}

}  // namespace

void ChannelActivity::set(std::optional<ActivityMark>& slot,
                          std::string_view created_at, std::uint64_t sequence) {
  if (!slot) slot.emplace();
  slot->sequence = sequence;
  slot->created_at.assign(created_at);  // reuses the capacity it has
}

ChannelActivity::AgentMarks& ChannelActivity::marks_of(
    std::string_view agent_id) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) it = agents_.emplace(agent_id, AgentMarks{}).first;
  return it->second;
}

void ChannelActivity::fold(
    std::string_view sender_id, std::string_view event_type,
    std::string_view created_at,
    std::optional<std::span<const std::string_view>> audience,
    std::uint64_t sequence) {
  if (!is_content(event_type)) return;
  set(last_content_, created_at, sequence);
  if (event_type != event_type::kText) return;
  set(marks_of(sender_id).sent, created_at, sequence);
  if (audience) {
    for (std::string_view member : *audience) {
      if (member != sender_id) {
        set(marks_of(member).seen_directed, created_at, sequence);
      }
    }
    return;
  }
  if (last_broadcast_ && last_broadcast_->sender_id != sender_id) {
    // The old last broadcast becomes the last by another; the swap reuses
    // both strings' storage.
    std::swap(last_broadcast_, last_broadcast_by_another_);
  }
  if (!last_broadcast_) last_broadcast_.emplace();
  last_broadcast_->sender_id.assign(sender_id);
  last_broadcast_->mark.sequence = sequence;
  last_broadcast_->mark.created_at.assign(created_at);
}

const ActivityMark* ChannelActivity::last_text_sent(
    std::string_view agent_id) const {
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || !it->second.sent) return nullptr;
  return &*it->second.sent;
}

const ActivityMark* ChannelActivity::last_text_seen(
    std::string_view agent_id) const {
  const ActivityMark* broadcast = nullptr;
  if (last_broadcast_ && last_broadcast_->sender_id != agent_id) {
    broadcast = &last_broadcast_->mark;
  } else if (last_broadcast_by_another_) {
    broadcast = &last_broadcast_by_another_->mark;
  }
  const ActivityMark* directed = nullptr;
  auto it = agents_.find(agent_id);
  if (it != agents_.end() && it->second.seen_directed) {
    directed = &*it->second.seen_directed;
  }
  return later(broadcast, directed);
}

}  // namespace parley::engine
