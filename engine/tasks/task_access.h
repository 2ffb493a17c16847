// Who may act on a task over the wire: the rule the hub checks for task
// requests that carry the agents bound to their connection, in the same
// hold of its lock as the read or change it guards. In-process calls carry
// no agents and are not checked.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/base/error.h"
#include "engine/tasks/task_table.h"

namespace parley::engine {

// The agents bound to the wire connection a request came from, sorted and
// unique. The viewed strings belong to the caller for the call's duration.
using ConnectionAgents = std::span<const std::string>;

// Whether `agents` holds `agent_id`.
bool holds(ConnectionAgents agents, std::string_view agent_id);

// Whether a connection holding `agents` may act on task `task_id`:
//   * no agents: access_denied "connection has no bound agent";
//   * a task the hub observed: its owner must be held, else access_denied
//     "connection is not bound to agent '<owner>'";
//   * an unobserved task whose checkpoint was claimed: one of the writers
//     must be held, else access_denied "connection holds no writer of task
//     '<id>''s checkpoint";
//   * an unobserved task nobody claimed: allowed.
Result<void> check_task_access(const TaskTable& tasks, std::string_view task_id,
                               ConnectionAgents agents);

// "connection is not bound to agent '<id>'" (access_denied), the answer to
// a wire request that acts for an agent its connection does not hold.
std::unexpected<Error> not_bound(std::string_view agent_id);

}  // namespace parley::engine
