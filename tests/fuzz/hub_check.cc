#include "tests/fuzz/hub_check.h"

#include <limits>

#include "engine/json/records_json.h"
#include "engine/json/task_json.h"
#include "replay/folded_store.h"
#include "tests/fuzz/fuzz_check.h"

namespace parley::fuzz {
namespace {

constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();

}  // namespace

void check_hub_against_log(const engine::Hub& hub, const log::LogStore& store) {
  auto folded = replay::FoldedStore::fold(store);
  FUZZ_CHECK(folded.has_value(),
             "the hub's own log does not fold: " + folded.error().message);
  const engine::HubState& state = (*folded)->state();

  const auto agents = state.registry.list({.limit = kAll});
  FUZZ_CHECK(agents.size() == hub.list_agents({.limit = kAll}).size(),
             "the hub and its log hold different numbers of agents");
  for (const engine::AgentRecord* agent : agents) {
    auto live = hub.get_agent(agent->agent_id());
    FUZZ_CHECK(
        live && engine::to_json(*live) == engine::to_json(agent->passport),
        "agent " + agent->agent_id() + " differs from its log");
    auto resume = hub.get_resume(agent->agent_id());
    FUZZ_CHECK(
        resume && engine::to_json(*resume) == engine::to_json(agent->resume),
        "agent " + agent->agent_id() + "'s resume differs from its log");
    auto rule = hub.get_rule(agent->agent_id());
    FUZZ_CHECK(rule && engine::to_json(*rule) == engine::to_json(agent->rule),
               "agent " + agent->agent_id() + "'s rule differs from its log");
    FUZZ_CHECK(hub.get_skill(agent->agent_id()) == agent->skill_md,
               "agent " + agent->agent_id() + "'s SKILL.md differs");
  }

  const auto& channels = state.channels.in_order();
  FUZZ_CHECK(channels.size() == hub.list_channels({}, {}, kAll).size(),
             "the hub and its log hold different numbers of channels");
  for (const engine::ChannelEntry* channel : channels) {
    const std::string& id = channel->metadata.channel_id;
    auto live = hub.get_channel(id);
    FUZZ_CHECK(
        live && engine::to_json(*live) == engine::to_json(channel->metadata),
        "channel " + id + " differs from its log: " +
            (live ? engine::to_json(*live).dump() : "missing") + " vs " +
            engine::to_json(channel->metadata).dump());
    auto live_state = hub.adapter_state(id);
    const std::optional<engine::JsonText> folded_state =
        channel->state ? std::optional(channel->state->to_json())
                       : std::nullopt;
    FUZZ_CHECK(live_state && *live_state == folded_state,
               "channel " + id + "'s adapter state differs from its log: " +
                   (live_state && *live_state ? **live_state : "null") +
                   " vs " + folded_state.value_or("null"));
  }

  const auto tasks = state.tasks.in_order();
  FUZZ_CHECK(tasks.size() == hub.list_tasks({.limit = kAll}).size(),
             "the hub and its log hold different numbers of tasks");
  for (const engine::TaskEntry* task : tasks) {
    auto live = hub.get_task(task->metadata.task_id);
    FUZZ_CHECK(
        live && engine::to_json(*live) == engine::to_json(task->metadata),
        "task " + task->metadata.task_id + " differs from its log");
  }
}

}  // namespace parley::fuzz
