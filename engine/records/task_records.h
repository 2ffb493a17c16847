// Log records of tasks (schemas/log.fbs TaskUpdated, TaskCheckpointed,
// CheckpointWritersClaimed) and their fold into a TaskTable. A TaskUpdated
// record carries the task's whole AG2 TaskMetadata after the change; a
// TaskCheckpointed record the checkpoint object; a CheckpointWritersClaimed
// record the agents that claimed an unobserved task's checkpoint. Builders fail
// with kInvalid when user JSON inside cannot be stored (an object key
// containing NUL); nothing is written then.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/base/error.h"
#include "engine/base/json_text.h"
#include "engine/tasks/task.h"
#include "engine/tasks/task_table.h"

namespace parley::engine {

Result<std::string> task_updated_record(const TaskMetadata& task);
// `state` is a JSON object's text.
Result<std::string> task_checkpointed_record(std::string_view task_id,
                                             const JsonText& state);
// `writers` sorted, as they are folded.
std::string checkpoint_writers_claimed_record(
    std::string_view task_id, std::span<const std::string> writers);

// Folds a verified TaskUpdated / TaskCheckpointed / CheckpointWritersClaimed
// record (`record` is the
// whole Record) into `tasks`. Fails with kStorage naming `log_sequence` when
// its payload does not decode; other record kinds are ignored.
Result<void> apply_task_record(TaskTable& tasks, std::uint64_t log_sequence,
                               std::string_view record);

}  // namespace parley::engine
