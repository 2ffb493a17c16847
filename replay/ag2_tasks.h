// Tasks in AG2's layout: tasks/{task_id}/metadata.json (TaskMetadata, AG2's
// declaration order) and tasks/{task_id}/checkpoint.json (the owner's last
// checkpoint). In the log they are TaskUpdated records (the task's whole
// metadata after each change) and TaskCheckpointed records (schemas/log.fbs);
// export takes the last of each per task, import writes one of each per task.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "log/log_store.h"
#include "replay/ag2_layout.h"

namespace parley::replay {

// Writes tasks/ under `out_dir`; returns how many tasks.
Ag2Result<std::size_t> export_ag2_tasks(const log::LogStore& store,
                                        const std::filesystem::path& out_dir);

struct TaskRecord {
  std::string at;      // the task's created_at: when it joins the log
  std::string record;  // TaskUpdated or TaskCheckpointed
};

// Reads `root`/tasks/ (absent: none). A metadata.json that is not a task
// (task_id, owner_id, spec.title strings; state one of AG2's six) is a
// data error.
Ag2Result<std::vector<TaskRecord>> read_ag2_tasks(
    const std::filesystem::path& root);

}  // namespace parley::replay
