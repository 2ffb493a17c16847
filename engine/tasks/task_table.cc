#include "engine/tasks/task_table.h"

#include <algorithm>

namespace parley::engine {

void TaskTable::put(TaskMetadata metadata) {
  auto it = tasks_.find(metadata.task_id);
  if (it == tasks_.end()) {
    order_.push_back(metadata.task_id);
    it = tasks_.emplace(metadata.task_id, TaskEntry{}).first;
  }
  TaskEntry& entry = it->second;
  const std::optional<std::string> old_channel = entry.metadata.channel_id;
  if (metadata.channel_id && metadata.channel_id != old_channel) {
    auto& ids = by_channel_[*metadata.channel_id];
    if (std::ranges::find(ids, metadata.task_id) == ids.end()) {
      ids.push_back(metadata.task_id);
    }
  }
  entry.metadata = std::move(metadata);
  if (entry.metadata.terminal()) entry.cancel_requesters.clear();
}

void TaskTable::set_checkpoint(std::string_view task_id, JsonText state) {
  checkpoints_.insert_or_assign(std::string(task_id), std::move(state));
}

void TaskTable::claim_checkpoint(std::string_view task_id,
                                 std::vector<std::string> writers) {
  writers_.try_emplace(std::string(task_id), std::move(writers));
}

void TaskTable::note_cancel_request(std::string_view task_id,
                                    std::string_view sender_id) {
  auto it = tasks_.find(task_id);
  if (it == tasks_.end() || it->second.metadata.terminal()) return;
  it->second.cancel_requesters.emplace(sender_id);
}

const TaskEntry* TaskTable::find(std::string_view task_id) const {
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? nullptr : &it->second;
}

std::optional<JsonText> TaskTable::checkpoint(std::string_view task_id) const {
  auto it = checkpoints_.find(task_id);
  if (it == checkpoints_.end()) return std::nullopt;
  return it->second;
}

const std::vector<std::string>* TaskTable::checkpoint_writers(
    std::string_view task_id) const {
  auto it = writers_.find(task_id);
  return it == writers_.end() ? nullptr : &it->second;
}

std::vector<const TaskEntry*> TaskTable::in_order() const {
  std::vector<const TaskEntry*> out;
  out.reserve(order_.size());
  for (const auto& id : order_) out.push_back(&tasks_.find(id)->second);
  return out;
}

std::vector<const TaskEntry*> TaskTable::live_in_channel(
    std::string_view channel_id) const {
  std::vector<const TaskEntry*> out;
  auto ids = by_channel_.find(channel_id);
  if (ids == by_channel_.end()) return out;
  for (const auto& id : ids->second) {
    const TaskEntry& entry = tasks_.find(id)->second;
    // A task re-observed under another channel belongs to that one.
    if (!entry.metadata.terminal() && entry.metadata.channel_id == channel_id) {
      out.push_back(&entry);
    }
  }
  return out;
}

std::size_t TaskTable::live_owned_by(std::string_view owner_id) const {
  return static_cast<std::size_t>(
      std::ranges::count_if(tasks_, [&](const auto& item) {
        return item.second.metadata.owner_id == owner_id &&
               !item.second.metadata.terminal();
      }));
}

}  // namespace parley::engine
