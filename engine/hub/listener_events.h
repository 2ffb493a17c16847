// What a change stages for the listeners (engine/hub/hub_listener.h): told
// once its batch is durable, in batch order. Each is a no-op when the hub
// has no listeners. Called while staging, writer lock held.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/hub/commit.h"
#include "engine/hub/hub_core.h"
#include "engine/hub/state_reads.h"

namespace parley::engine {

void stage_agent_event(const HubCore& core, Commit& batch,
                       std::string_view agent_id, std::string_view kind,
                       nlohmann::json payload);
// The payload gets "metadata", the channel's as it is when told.
void stage_channel_event(const HubCore& core, const StateReads& reads,
                         Commit& batch, std::string_view channel_id,
                         std::string_view kind, nlohmann::json payload);
// on_envelope_posted for the envelope staged last.
void stage_envelope_posted(const HubCore& core, const StateReads& reads,
                           Commit& batch);

}  // namespace parley::engine
