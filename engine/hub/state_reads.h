// The hub's read side: answers from the folded state (under its shared
// lock) and from the log, never waiting for the writer or a sync.
//
// Thread safety: every member may be called from any thread, concurrently
// with changes; each takes core.state_mutex shared for its own duration.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/base/json_text.h"
#include "engine/channels/channel.h"
#include "engine/hub/hub_core.h"
#include "engine/hub/requests.h"
#include "engine/registry/identity.h"
#include "engine/tasks/task.h"
#include "engine/tasks/task_access.h"

namespace parley::engine {

class StateReads {
 public:
  explicit StateReads(const HubCore& core) : core_(core) {}

  // Agents.
  Result<Passport> get_agent(std::string_view name_or_id) const;
  std::optional<std::string> find_agent_id(std::string_view name) const;
  std::string name_for(std::string_view agent_id,
                       std::optional<std::string_view> fallback) const;
  Result<Resume> get_resume(std::string_view agent_id) const;
  Result<Rule> get_rule(std::string_view agent_id) const;
  std::optional<std::string> get_skill(std::string_view agent_id) const;
  std::vector<Passport> list_agents(const AgentFilter& filter) const;
  std::vector<std::string> agents_with_capability(
      std::string_view capability) const;
  std::vector<std::string> agent_owners(std::string_view agent_id) const;

  // Channels.
  Result<ChannelMetadata> get_channel(std::string_view channel_id) const;
  std::vector<ChannelMetadata> list_channels(
      std::optional<std::string_view> agent_id,
      std::optional<ChannelState> state, std::size_t limit) const;
  // Python slice [since:until] of the channel's envelopes (negative values
  // count from the end); an unknown channel reads as empty.
  Result<std::vector<Envelope>> read_wal(
      std::string_view channel_id, std::int64_t since = 0,
      std::optional<std::int64_t> until = std::nullopt) const;
  Result<std::optional<Envelope>> find_envelope_by_causation(
      std::string_view channel_id, std::string_view sender_id,
      std::string_view causation_id) const;
  bool can_send(std::string_view channel_id, std::string_view sender_id,
                std::optional<std::string_view> event_type) const;
  Result<std::optional<JsonText>> adapter_state(
      std::string_view channel_id) const;
  std::vector<PendingTurn> pending_turns_for(std::string_view agent_id) const;

  // Delivery.
  std::string inbox_cursor(std::string_view agent_id,
                           std::string_view channel_id) const;
  Result<std::vector<Envelope>> replay_for(
      std::string_view agent_id, std::string_view since_envelope_id) const;

  // Audit.
  Result<std::vector<JsonText>> read_audit() const;

  // Tasks.
  Result<TaskMetadata> get_task(std::string_view task_id) const;
  std::vector<TaskMetadata> list_tasks(const TaskFilter& filter) const;
  Result<std::optional<JsonText>> read_task_checkpoint(
      std::string_view task_id,
      std::optional<ConnectionAgents> connection) const;
  Result<void> check_task_access(std::string_view task_id,
                                 ConnectionAgents connection) const;
  std::optional<std::vector<std::string>> checkpoint_writers(
      std::string_view task_id) const;

 private:
  const HubCore& core_;
};

}  // namespace parley::engine
