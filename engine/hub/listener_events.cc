#include "engine/hub/listener_events.h"

#include "engine/json/records_json.h"

namespace parley::engine {

void stage_agent_event(const HubCore& core, Commit& batch,
                       std::string_view agent_id, std::string_view kind,
                       nlohmann::json payload) {
  if (core.listeners.empty()) return;
  batch.notify([agent_id = std::string(agent_id), kind = std::string(kind),
                payload = std::move(payload)](HubListener& listener) {
    listener.on_agent_event(agent_id, kind, payload);
  });
}

void stage_channel_event(const HubCore& core, const StateReads& reads,
                         Commit& batch, std::string_view channel_id,
                         std::string_view kind, nlohmann::json payload) {
  if (core.listeners.empty()) return;
  batch.notify([&reads, channel_id = std::string(channel_id),
                kind = std::string(kind),
                payload = std::move(payload)](HubListener& listener) mutable {
    if (!payload.contains("metadata")) {
      auto metadata = reads.get_channel(channel_id);
      payload["metadata"] = metadata ? to_json(*metadata) : nullptr;
    }
    listener.on_channel_event(channel_id, kind, payload);
  });
}

void stage_envelope_posted(const HubCore& core, const StateReads& reads,
                           Commit& batch) {
  if (core.listeners.empty() || batch.envelopes.empty()) return;
  std::shared_ptr<const Envelope> envelope = batch.envelopes.back().envelope;
  batch.notify([&reads, envelope](HubListener& listener) {
    if (auto metadata = reads.get_channel(envelope->channel_id)) {
      listener.on_envelope_posted(*envelope, *metadata);
    }
  });
}

}  // namespace parley::engine
