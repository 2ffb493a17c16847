// The folded tasks of a hub: every observed task's metadata, the checkpoints
// (opaque JSON, last write wins) with the agents that claimed each unobserved
// task's checkpoint by writing it first over the wire, and the peers who asked
// a live task's owner to cancel it (the one post a non-participant may make).
// Pure state: HubState::apply folds TaskUpdated, TaskCheckpointed,
// CheckpointWritersClaimed and ag2.task.cancel_request envelopes into it, on
// hydrate and live alike.
//
// Thread safety: none; the hub guards it (one writer, shared readers).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/json_text.h"
#include "engine/tasks/task.h"

namespace parley::engine {

struct TaskEntry {
  TaskMetadata metadata;
  // Senders of ag2.task.cancel_request envelopes for this task while it is
  // live; cleared when it turns terminal.
  std::set<std::string, std::less<>> cancel_requesters;
};

class TaskTable {
 public:
  // Folds. put() replaces the task's whole record (a TaskUpdated record
  // carries the task after the change); a new id joins the insertion order.
  void put(TaskMetadata metadata);
  void set_checkpoint(std::string_view task_id, JsonText state);
  // The first claim of `task_id`'s checkpoint stands; a later one is
  // ignored (the hub writes at most one).
  void claim_checkpoint(std::string_view task_id,
                        std::vector<std::string> writers);
  // A cancel request for `task_id` from `sender_id`; ignored unless the
  // task is known and live.
  void note_cancel_request(std::string_view task_id,
                           std::string_view sender_id);

  // Queries.
  const TaskEntry* find(std::string_view task_id) const;
  // The last checkpoint written for `task_id` (known task or not).
  std::optional<JsonText> checkpoint(std::string_view task_id) const;
  // The agents that claimed `task_id`'s checkpoint (sorted), or null when
  // nobody has.
  const std::vector<std::string>* checkpoint_writers(
      std::string_view task_id) const;
  // Tasks in the order they were first observed.
  std::vector<const TaskEntry*> in_order() const;
  // Non-terminal tasks observed under `channel_id`, in observation order.
  std::vector<const TaskEntry*> live_in_channel(
      std::string_view channel_id) const;
  // How many non-terminal tasks `owner_id` has.
  std::size_t live_owned_by(std::string_view owner_id) const;
  std::size_t size() const { return tasks_.size(); }

 private:
  std::map<std::string, TaskEntry, std::less<>> tasks_;
  std::vector<std::string> order_;  // first-observation order
  // channel id -> task ids observed under it, in observation order.
  std::map<std::string, std::vector<std::string>, std::less<>> by_channel_;
  std::map<std::string, JsonText, std::less<>> checkpoints_;
  std::map<std::string, std::vector<std::string>, std::less<>> writers_;
};

}  // namespace parley::engine
