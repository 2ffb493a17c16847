#include "engine/client/hooks.h"

#include <algorithm>

namespace parley::client {

void read_wal_until(AgentClient& client, const Envelope& envelope,
                    Handler<std::vector<Envelope>> done) {
  client.hub_client()->read_wal(
      envelope.channel_id, [id = envelope.envelope_id, done = std::move(done)](
                               Result<std::vector<Envelope>> wal) {
        if (!wal) return done(std::unexpected(std::move(wal.error())));
        done(slice_until(std::move(*wal), id));
      });
}

std::vector<Envelope> slice_until(std::vector<Envelope> wal,
                                  std::string_view envelope_id) {
  const auto at = std::ranges::find(wal, envelope_id, &Envelope::envelope_id);
  wal.erase(at, wal.end());
  return wal;
}

Result<std::shared_ptr<const engine::ChannelAdapter>> adapter_for(
    const AgentClient& client, const ChannelMetadata& metadata) {
  auto adapter =
      client.adapters().find(metadata.manifest.type, metadata.manifest.version);
  if (!adapter) {
    return client_error(code::kInvalid,
                        "no adapter for channel type '" +
                            metadata.manifest.type + "' version " +
                            std::to_string(metadata.manifest.version));
  }
  return adapter;
}

Result<std::shared_ptr<const ViewPolicy>> resolve_view_policy(
    const AgentClient& client, const ChannelMetadata& metadata) {
  if (auto view = client.view_override(metadata.channel_id)) return view;
  auto adapter = adapter_for(client, metadata);
  if (!adapter) return std::unexpected(adapter.error());
  const std::string& name = metadata.manifest.default_view_policy;
  auto view =
      client.options().views.make(name, metadata, client.agent_id(), **adapter);
  if (!view) {
    return client_error(code::kInvalid,
                        "no view policy registered for '" + name + "'");
  }
  return view;
}

TurnDependencies stamp_dependencies(
    AgentClient& client, std::shared_ptr<const ChannelMetadata> channel,
    std::shared_ptr<const engine::AdapterState> state,
    const Envelope& triggering, std::shared_ptr<Task> task) {
  TurnDependencies dependencies;
  if (channel) {
    if (auto adapter = adapter_for(client, *channel)) {
      dependencies.adapter = std::move(*adapter);
    }
  }
  dependencies.channel = std::move(channel);
  dependencies.channel_state = std::move(state);
  dependencies.agent_client = client.shared_from_this();
  dependencies.hub = client.hub_client();
  dependencies.triggering = triggering;
  dependencies.task = std::move(task);
  return dependencies;
}

Result<std::unique_ptr<engine::AdapterState>> fold_channel(
    const engine::ChannelAdapter& adapter, const ChannelMetadata& metadata,
    std::span<const Envelope> wal) {
  auto state = adapter.initial_state(metadata);
  if (!state) return std::unexpected(from_engine(state.error()));
  for (const Envelope& envelope : wal) {
    adapter.fold(engine::view_of(envelope), **state);
  }
  return std::move(*state);
}

}  // namespace parley::client
