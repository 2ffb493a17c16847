#include "engine/tasks/task_access.h"

#include <algorithm>

#include "engine/base/python_repr.h"

namespace parley::engine {

bool holds(ConnectionAgents agents, std::string_view agent_id) {
  return std::ranges::binary_search(agents, agent_id, std::less<>{});
}

std::unexpected<Error> not_bound(std::string_view agent_id) {
  return access_denied("connection is not bound to agent " +
                       python_repr(agent_id));
}

Result<void> check_task_access(const TaskTable& tasks, std::string_view task_id,
                               ConnectionAgents agents) {
  if (agents.empty()) return access_denied("connection has no bound agent");
  if (const TaskEntry* task = tasks.find(task_id)) {
    if (!holds(agents, task->metadata.owner_id)) {
      return not_bound(task->metadata.owner_id);
    }
    return {};
  }
  const std::vector<std::string>* writers = tasks.checkpoint_writers(task_id);
  if (!writers) return {};
  const bool held = std::ranges::any_of(
      *writers,
      [&](const std::string& writer) { return holds(agents, writer); });
  if (!held) {
    return access_denied("connection holds no writer of task " +
                         python_repr(task_id) + "'s checkpoint");
  }
  return {};
}

}  // namespace parley::engine
