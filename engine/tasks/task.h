// AG2's task record: a task an agent owns and the hub observes.
// JSON-valued fields are kept as JSON text; engine/json/task_json.h reads
// and writes AG2's JSON shape.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "engine/base/error.h"
#include "engine/base/json_text.h"

namespace parley::engine {

// AG2 TaskState values. Terminal: completed, failed, expired, cancelled.
namespace task_state {
inline constexpr std::string_view kCreated = "created";
inline constexpr std::string_view kRunning = "running";
inline constexpr std::string_view kCompleted = "completed";
inline constexpr std::string_view kFailed = "failed";
inline constexpr std::string_view kExpired = "expired";
inline constexpr std::string_view kCancelled = "cancelled";
}  // namespace task_state

// True for the six AG2 task states.
bool is_task_state(std::string_view state);
bool is_terminal_task_state(std::string_view state);

// Task ids become keys and, in AG2, store paths: one path segment matching
// [A-Za-z0-9][A-Za-z0-9._-]{0,127}.
bool is_valid_task_id(std::string_view task_id);
// protocol_error "invalid task_id: '<id>'", the answer to an id that is not.
std::unexpected<Error> invalid_task_id(std::string_view task_id);

// Hub-driven terminal reasons: a task's TTL passed, or its channel ended.
inline constexpr std::string_view kTaskTtlExpired = "ttl_expired";
inline constexpr std::string_view kTaskChannelClosed = "channel_closed";

struct TaskSpec {
  std::string title;
  std::string description;
  JsonText payload = "{}";  // a JSON object
  std::optional<std::string> capability;
};

struct TaskMetadata {
  std::string task_id;
  std::string owner_id;
  TaskSpec spec;
  std::string state = std::string(task_state::kCreated);
  std::string created_at;
  std::optional<std::string> started_at;
  std::optional<std::string> completed_at;
  std::optional<std::string> expires_at;
  std::optional<std::string> last_progress_at;
  JsonText progress = "{}";  // a JSON object
  JsonText result = "null";  // any JSON value
  std::string error;
  std::optional<std::string> channel_id;

  bool terminal() const { return is_terminal_task_state(state); }
};

}  // namespace parley::engine

namespace parley::engine {

// update_task's arguments; absent = leave unchanged.
struct TaskUpdate {
  std::optional<std::string> state;
  std::optional<JsonText> progress;  // a JSON object, merged shallowly
  std::optional<JsonText> result;    // any JSON value but null
  std::optional<std::string> error;  // ignored when empty
};

// list_tasks' filters, all exact.
struct TaskFilter {
  std::optional<std::string> owner_id;
  std::optional<std::string> channel_id;
  std::optional<std::string> state;
  std::size_t limit = 50;
};

}  // namespace parley::engine
