#include "engine/hub/hub_health.h"

#include <nlohmann/json.hpp>

#include "engine/hub/hub.h"
#include "engine/hub/hub_commit.h"
#include "parley/schemas/log_generated.h"

namespace parley::engine {

nlohmann::json to_json(const HubHealth& health) {
  using nlohmann::json;
  return {
      {"active_channels", health.active_channels},
      {"registered_agents", health.registered_agents},
      {"pending_inbox_total", health.pending_inbox_total},
      {"max_pending_inbox_depth", health.max_pending_inbox_depth
                                      ? json(*health.max_pending_inbox_depth)
                                      : json(nullptr)},
      {"registered_listeners", health.registered_listeners},
      {"adapters_loaded", health.adapters_loaded},
      {"audit_log_bytes", health.audit_log_bytes},
      {"channels_by_state", health.channels_by_state},
      {"pending_inbox", health.pending_inbox},
      {"log_sequence", health.log_sequence},
      {"failure", health.failure ? json(*health.failure) : json(nullptr)},
      {"closed", health.closed},
  };
}

HubHealth Hub::health() const {
  HubHealth health;
  for (ChannelState state :
       {ChannelState::kPending, ChannelState::kActive, ChannelState::kClosing,
        ChannelState::kClosed, ChannelState::kExpired}) {
    health.channels_by_state[std::string(to_string(state))] = 0;
  }
  {
    std::shared_lock lock(state_mutex_);
    for (const ChannelEntry* channel : state_.channels.in_order()) {
      ++health
            .channels_by_state[std::string(to_string(channel->metadata.state))];
      if (!is_terminal(channel->metadata.state)) ++health.active_channels;
    }
    health.registered_agents =
        static_cast<std::int64_t>(state_.registry.size());
  }
  {
    std::lock_guard lock(delivery_mutex_);
    for (const auto& [agent_id, count] : pending_inbox_) {
      health.pending_inbox.emplace(agent_id, count);
      health.pending_inbox_total += count;
      health.max_pending_inbox_depth =
          std::max(health.max_pending_inbox_depth.value_or(0), count);
    }
  }
  {
    std::lock_guard lock(failure_mutex_);
    health.failure = failure_;
  }
  health.registered_listeners = static_cast<std::int64_t>(listeners_.size());
  health.adapters_loaded = static_cast<std::int64_t>(adapters_.size());
  health.audit_log_bytes = audit_bytes_.load();
  health.closed = closed_;
  health.log_sequence = closed_ ? 0 : store_->last_sequence();
  return health;
}

void Hub::count_audit_bytes(const Commit& batch) {
  std::int64_t bytes = 0;
  for (const log::AppendEntry& entry : batch.entries) {
    const schema::Record* root = schema::GetRecord(entry.record.data());
    if (root->body_type() == schema::Body::AuditRecorded) {
      bytes += static_cast<std::int64_t>(entry.record.size());
    }
  }
  if (bytes > 0) audit_bytes_ += bytes;
}

}  // namespace parley::engine
