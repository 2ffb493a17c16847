#include "replay/state_hash.h"

#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "engine/json/records_json.h"

namespace parley::replay {

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string hash_hex(std::uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(hash));
  return text;
}

std::string canonical_channel_text(const engine::ChannelEntry& channel) {
  std::string text = "metadata ";
  text += engine::dump_compact(engine::to_json(channel.metadata));
  text += "\nadapter_state ";
  text += channel.state ? std::string(channel.state->to_json()) : "null";
  text += "\nlast_sequence ";
  text += std::to_string(channel.last_sequence);
  text += '\n';
  for (const auto& [key, sequence] : channel.causation) {
    text += "causation " + key.first + ' ' + key.second + ' ' +
            std::to_string(sequence) + '\n';
  }
  return text;
}

std::uint64_t channel_state_hash(const engine::ChannelEntry& channel) {
  return fnv1a64(canonical_channel_text(channel));
}

std::string canonical_store_text(const engine::HubState& state) {
  std::string text;
  engine::AgentFilter everyone{.limit =
                                   std::numeric_limits<std::size_t>::max()};
  for (const engine::AgentRecord* agent : state.registry.list(everyone)) {
    text +=
        "agent " + engine::dump_compact(engine::to_json(agent->passport)) +
        ' ' + engine::dump_compact(engine::to_json(agent->resume)) + ' ' +
        engine::dump_compact(engine::to_json(agent->rule)) + ' ' +
        engine::dump_compact(agent->skill_md ? nlohmann::json(*agent->skill_md)
                                             : nlohmann::json()) +
        '\n';
    for (const auto& [channel, envelope] : agent->cursors) {
      text += "cursor " + channel + ' ' + envelope + '\n';
    }
    for (const std::string& task : agent->observed_tasks) {
      text += "observed " + task + '\n';
    }
    for (const std::string& owner : agent->owners) {
      text += "owner " + owner + '\n';
    }
  }
  for (const engine::ChannelEntry* channel : state.channels.in_order()) {
    text += "channel " + channel->metadata.channel_id + ' ' +
            hash_hex(channel_state_hash(*channel)) + '\n';
  }
  text += "largest_envelope_id " + state.largest_envelope_id + '\n';
  return text;
}

std::uint64_t store_state_hash(const engine::HubState& state) {
  return fnv1a64(canonical_store_text(state));
}

}  // namespace parley::replay
