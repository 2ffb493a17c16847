// The hub's task changes: observations of tasks the owners' runtimes
// report, updates, checkpoints and their writers, the TTL expiry of tasks,
// and the terminal transitions a closing channel cascades to its tasks.
// Each change is built here and run by the Committer; its stage function
// validates against the folded TaskTable.
#pragma once

#include <cassert>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "engine/base/error.h"
#include "engine/channels/channel.h"
#include "engine/hub/commit.h"
#include "engine/hub/hub_core.h"
#include "engine/hub/identities.h"
#include "engine/tasks/task.h"
#include "engine/tasks/task_access.h"
#include "log/thread_annotations.h"

namespace parley::engine {

class TaskMutations {
 public:
  TaskMutations(HubCore& core, const Identities& identities)
      : core_(core), identities_(identities) {}

  // See Hub::observe_task, update_task and checkpoint_task.
  Change<void> observe_task(TaskMetadata metadata,
                            std::optional<ConnectionAgents> connection);
  Change<void> update_task(std::string task_id, TaskUpdate update,
                           std::optional<ConnectionAgents> connection);
  Change<void> checkpoint_task(std::string task_id, JsonText state,
                               std::optional<ConnectionAgents> connection);
  // Every live task whose expires_at <= now: expired, "ttl_expired".
  Change<void> expire_due_tasks();

  // Writer lock held: the channel's live tasks expire ("channel_closed").
  void stage_cascade(Commit& batch, std::string_view channel_id) const
      REQUIRES(core_.writer);
  // For another hub part holding its own core's writer lock: every part
  // shares one HubCore, so this one's is held.
  void check_same_writer([[maybe_unused]] const HubCore& core) const
      REQUIRES(core.writer) ASSERT_CAPABILITY(core_.writer) {
    assert(&core == &core_);
  }
  // Writer lock held: the one post a non-participant may make, a cancel
  // request for a live task of the channel addressed to its owner only,
  // once per sender.
  bool admits_cancel_request(const ChannelMetadata& channel,
                             const Envelope& envelope) const
      REQUIRES(core_.writer);

 private:
  // Stages `task` (already moved to a terminal state) with its audit
  // record, listener event and the owner's observation. `resumes` holds
  // owners' resumes already changed earlier in the same batch.
  void stage_terminal(Commit& batch, const TaskMetadata& task,
                      std::string_view reason,
                      std::map<std::string, Resume, std::less<>>& resumes) const
      REQUIRES(core_.writer);

  HubCore& core_;
  const Identities& identities_;
};

}  // namespace parley::engine
