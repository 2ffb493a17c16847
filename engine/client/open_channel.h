// Opening a channel as its initiator (AG2's `open` of HumanClient and
// AgentClient): targets by name or agent id, resolved with get_agent in
// order, then create_channel.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/client/hub_client.h"

namespace parley::client {

// A channel of `type` from its creator to `targets` (names or agent ids).
struct OpenRequest {
  std::string type;
  std::vector<std::string> targets;
  std::optional<engine::DurationSpec> ttl;
  std::optional<std::string> knobs_json;  // a JSON object
  std::optional<std::string> intent;
  std::optional<std::string> labels_json;  // a JSON object of strings
};

// `done` gets the channel's metadata once every invitee acked, the first
// failing lookup's error, or create_channel's. On `hub`'s strand.
void open_channel(std::shared_ptr<HubClient> hub, std::string creator_id,
                  OpenRequest request, Handler<ChannelMetadata> done);

}  // namespace parley::client
