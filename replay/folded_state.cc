#include "replay/folded_state.h"

#include <cstdio>
#include <limits>

#include "engine/adapters/builtin_adapters.h"
#include "engine/ops/records_json.h"

namespace parley::replay {

engine::Result<void> fold_store(const log::LogStore& store,
                                engine::HubState& state) {
  std::optional<engine::Error> failed;
  auto read = store.read(
      1, log::kLastSequence,
      [&](std::uint64_t log_sequence, std::string_view record) {
        if (auto folded = state.apply(log_sequence, record); !folded) {
          failed = folded.error();
          return false;
        }
        return true;
      });
  if (failed) return std::unexpected(*failed);
  if (!read) {
    return engine::fail(engine::ErrorKind::kStorage,
                        std::string(log::to_string(read.error().code)) + ": " +
                            read.error().message);
  }
  return {};
}

const engine::AdapterRegistry& builtin_adapter_registry() {
  static const engine::AdapterRegistry registry = [] {
    engine::AdapterRegistry adapters;
    for (auto& adapter : engine::builtin_adapters()) {
      adapters.add(std::move(adapter));
    }
    return adapters;
  }();
  return registry;
}

nlohmann::json folded_state_json(const engine::HubState& state) {
  nlohmann::json agents = nlohmann::json::object();
  engine::AgentFilter everyone;
  everyone.limit = std::numeric_limits<std::size_t>::max();
  for (const engine::AgentRecord* agent : state.registry.list(everyone)) {
    agents[agent->agent_id()] = {
        {"passport", engine::to_json(agent->passport)},
        {"resume", engine::to_json(agent->resume)},
        {"rule", engine::to_json(agent->rule)},
        {"skill",
         agent->skill_md ? nlohmann::json(*agent->skill_md) : nlohmann::json()},
        {"cursors", agent->cursors},
        {"observed_tasks", agent->observed_tasks},
    };
  }
  nlohmann::json channels = nlohmann::json::object();
  for (const engine::ChannelEntry* channel : state.channels.in_order()) {
    channels[channel->metadata.channel_id] = {
        {"metadata", engine::to_json(channel->metadata)},
        {"adapter_state", channel->state
                              ? nlohmann::json::parse(channel->state->to_json())
                              : nlohmann::json()},
        {"last_sequence", channel->last_sequence},
    };
  }
  return {{"agents", std::move(agents)},
          {"channels", std::move(channels)},
          {"largest_envelope_id", state.largest_envelope_id}};
}

std::uint64_t folded_state_hash(const engine::HubState& state) {
  std::uint64_t hash = 14695981039346656037ull;
  for (unsigned char byte : folded_state_json(state).dump()) {
    hash = (hash ^ byte) * 1099511628211ull;
  }
  return hash;
}

std::string hash_hex(std::uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace parley::replay
