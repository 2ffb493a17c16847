#include "engine/transport/replay_order.h"

#include <algorithm>

#include "engine/transport/frame_codec.h"

namespace parley::transport {

void ReplayOrder::begin(std::string_view agent_id) {
  log::MutexLock lock(mutex_);
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) it = agents_.emplace(agent_id, Agent{}).first;
  ++it->second.replays;
  tracked_.store(agents_.size(), std::memory_order_release);
}

ReplayOrder::Live ReplayOrder::classify(const EnvelopePtr& envelope,
                                        const std::string& recipient_id) {
  auto it = agents_.find(recipient_id);
  if (it == agents_.end()) return Live::kSent;
  Agent& agent = it->second;
  if (agent.replays > 0) {
    const std::size_t bytes = notify_size_estimate(*envelope);
    if (agent.held.size() >= limits_.max_frames ||
        agent.held_bytes + bytes > limits_.max_bytes) {
      return Live::kOverflow;
    }
    agent.held.push_back(envelope);
    agent.held_bytes += bytes;
    return Live::kHeld;
  }
  const bool fresh = above_floor(agent, *envelope);
  forget_if_done(it);
  return fresh ? Live::kSent : Live::kDuplicate;
}

std::vector<ReplayOrder::EnvelopePtr> ReplayOrder::finish(
    Agent& agent, std::span<const engine::Envelope> replayed) {
  for (const engine::Envelope& envelope : replayed) {
    std::string& floor = agent.floors[envelope.channel_id];
    floor = std::max(floor, envelope.envelope_id);
  }
  std::vector<EnvelopePtr> out;
  if (--agent.replays == 0) {
    for (EnvelopePtr& envelope : agent.held) {
      if (above_floor(agent, *envelope)) out.push_back(std::move(envelope));
    }
    agent.held.clear();
    agent.held_bytes = 0;
  }
  return out;
}

bool ReplayOrder::above_floor(Agent& agent, const engine::Envelope& envelope) {
  auto floor = agent.floors.find(envelope.channel_id);
  if (floor == agent.floors.end()) return true;
  if (envelope.envelope_id <= floor->second) return false;
  agent.floors.erase(floor);
  return true;
}

void ReplayOrder::forget_if_done(
    std::map<std::string, Agent, std::less<>>::iterator it) {
  if (it->second.replays > 0 || !it->second.floors.empty()) return;
  agents_.erase(it);
  tracked_.store(agents_.size(), std::memory_order_release);
}

}  // namespace parley::transport
