// The default handler's public hooks (AG2's read_wal_until,
// resolve_view_policy, stamp_dependencies), for custom handlers that want
// the standard pre-model wiring with their own post-model behaviour, or the
// reverse; and the client's local fold of a channel, with the same adapters
// the hub folds with.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "engine/adapters/channel_adapter.h"
#include "engine/client/agent_client.h"

namespace parley::client {

// The channel's log before `envelope` (excluding it; the whole log when it
// is not there), read with read_wal. `done` on the strand.
void read_wal_until(AgentClient& client, const Envelope& envelope,
                    Handler<std::vector<Envelope>> done);

// The envelopes of `wal` before the one with `envelope_id` (all of them
// when it is absent).
std::vector<Envelope> slice_until(std::vector<Envelope> wal,
                                  std::string_view envelope_id);

// The view `client`'s agent uses in the channel: the override set with
// AgentClient::set_view, else the view the manifest's default_view_policy
// names, made by the client's ViewRegistry. kInvalid when the client has no
// adapter for the channel type ("no adapter for channel type '<t>' version
// <v>") or no view by that name ("no view policy registered for '<n>'").
// On the strand.
Result<std::shared_ptr<const ViewPolicy>> resolve_view_policy(
    const AgentClient& client, const ChannelMetadata& metadata);

// The adapter `client` folds the channel with, or kInvalid as above.
Result<std::shared_ptr<const engine::ChannelAdapter>> adapter_for(
    const AgentClient& client, const ChannelMetadata& metadata);

// The dependencies of one turn on `triggering` in `channel`, whose folded
// state is `state`, run under `task` (if any).
TurnDependencies stamp_dependencies(
    AgentClient& client, std::shared_ptr<const ChannelMetadata> channel,
    std::shared_ptr<const engine::AdapterState> state,
    const Envelope& triggering, std::shared_ptr<Task> task = nullptr);

// The channel's adapter state folded from `wal` (its whole log, in order)
// with `adapter`, as the hub folds it: initial_state(metadata), then fold()
// of every envelope. Fails as initial_state does.
Result<std::unique_ptr<engine::AdapterState>> fold_channel(
    const engine::ChannelAdapter& adapter, const ChannelMetadata& metadata,
    std::span<const Envelope> wal);

}  // namespace parley::client
