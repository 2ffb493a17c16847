#include "engine/hub/hub_health.h"

#include <nlohmann/json.hpp>

#include "engine/hub/committer.h"
#include "engine/hub/delivery.h"
#include "engine/hub/hub.h"
#include "engine/hub/hub_core.h"

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
      {"log_cache_bytes", health.log_cache_bytes},
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
    log::ReaderLock lock(core_->state_mutex);
    for (const ChannelEntry* channel : core_->state.channels.in_order()) {
      ++health
            .channels_by_state[std::string(to_string(channel->metadata.state))];
      if (!is_terminal(channel->metadata.state)) ++health.active_channels;
    }
    health.registered_agents =
        static_cast<std::int64_t>(core_->state.registry.size());
  }
  for (const auto& [agent_id, count] : delivery_->pending_inbox()) {
    health.pending_inbox.emplace(agent_id, count);
    health.pending_inbox_total += count;
    health.max_pending_inbox_depth =
        std::max(health.max_pending_inbox_depth.value_or(0), count);
  }
  health.failure = committer_->failure();
  health.registered_listeners =
      static_cast<std::int64_t>(core_->listeners.size());
  health.adapters_loaded = static_cast<std::int64_t>(core_->adapters.size());
  health.audit_log_bytes = committer_->audit_bytes();
  health.closed = core_->closed;
  health.log_sequence = core_->closed ? 0 : core_->store->last_sequence();
  health.log_cache_bytes = core_->closed ? 0 : core_->store->cache_bytes();
  if (!core_->closed) health.log_commits = core_->store->commit_stats();
  return health;
}

}  // namespace parley::engine
