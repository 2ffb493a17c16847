// An agent's own task (AG2's `agent.task(...)` block, owner side), mirrored
// to the hub as AG2's client mirrors it:
//
//   Task::start     observe_task {state "running", created_at = started_at
//                   = now, channel_id, spec}; the id is minted here
//   progress        update_task {progress: payload}
//   complete        update_task {state "completed", result}
//   fail            update_task {state "failed", error}
//   cancel          update_task {state "cancelled", error: reason or null}
//
// after a terminal step, when the spec has a capability,
// record_observation {owner_id, capability, outcome, latency_ms since the
// start, task_id} (the owner's resume track record). A step after a
// terminal one fails with kInvalid "task <id> is already <state>". A hub
// error is given to `done` (AG2 logs it and reports "mirror_failed"
// instead).
//
// A turn runs under a task when a handler passes it to default_handler:
// the turn's tools see it as TurnDependencies::task (the `tasks` tool's
// progress and complete act on it).
//
// Threading: every member may be called from any thread; `done` runs on
// the HubClient's strand.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "engine/client/error.h"
#include "engine/tasks/task.h"

namespace parley::client {

class AgentClient;

struct TaskSpec {
  std::string title;
  std::string description;
  std::string payload_json = "{}";  // a JSON object
  std::optional<std::string> capability;
};

class Task : public std::enable_shared_from_this<Task> {
  struct PrivateTag {};

 public:
  // Starts a task owned by `owner`, begun by a turn in `channel_id` (if
  // any).
  static void start(std::shared_ptr<AgentClient> owner, TaskSpec spec,
                    std::optional<std::string> channel_id,
                    Handler<std::shared_ptr<Task>> done);

  Task(PrivateTag, std::shared_ptr<AgentClient> owner, std::string task_id,
       TaskSpec spec);

  const std::string& task_id() const { return task_id_; }
  const TaskSpec& spec() const { return spec_; }

  // `payload_json`: a JSON object, merged into the task's progress.
  void progress(std::string payload_json, Handler<void> done);
  // `result_json`: any JSON value; nullopt leaves the result unset.
  void complete(std::optional<std::string> result_json, Handler<void> done);
  void fail(std::string error, Handler<void> done);
  void cancel(std::string reason, Handler<void> done);

 private:
  // One update_task; after a terminal state, the observation.
  void update(engine::TaskUpdate update, Handler<void> done);

  const std::shared_ptr<AgentClient> owner_;
  const std::string task_id_;
  const TaskSpec spec_;
  const std::chrono::steady_clock::time_point started_ =
      std::chrono::steady_clock::now();
  // On the strand: the terminal state once one was sent.
  std::optional<std::string> ended_;
};

}  // namespace parley::client
