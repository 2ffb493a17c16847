#include "engine/tasks/task.h"

#include <algorithm>
#include <array>

namespace parley::engine {

namespace {

constexpr std::array<std::string_view, 6> kStates = {
    task_state::kCreated, task_state::kRunning, task_state::kCompleted,
    task_state::kFailed,  task_state::kExpired, task_state::kCancelled};

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9');
}

}  // namespace

bool is_task_state(std::string_view state) {
  return std::ranges::find(kStates, state) != kStates.end();
}

bool is_terminal_task_state(std::string_view state) {
  return state == task_state::kCompleted || state == task_state::kFailed ||
         state == task_state::kExpired || state == task_state::kCancelled;
}

bool is_valid_task_id(std::string_view task_id) {
  if (task_id.empty() || task_id.size() > 128 || !is_alnum(task_id.front())) {
    return false;
  }
  return std::ranges::all_of(task_id, [](char c) {
    return is_alnum(c) || c == '.' || c == '_' || c == '-';
  });
}

std::unexpected<Error> invalid_task_id(std::string_view task_id) {
  return protocol_error("invalid task_id: '" + std::string(task_id) + "'");
}

}  // namespace parley::engine
