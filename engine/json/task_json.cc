#include "engine/json/task_json.h"

#include <initializer_list>

namespace parley::engine {

namespace {

using nlohmann::json;

json optional_text(const std::optional<std::string>& value) {
  return value ? json(*value) : json(nullptr);
}

// Strict reader of one JSON object named `where` ("task", "task.spec").
class Fields {
 public:
  Fields(const json& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  Result<void> only(std::initializer_list<std::string_view> keys) const {
    for (const auto& [key, value] : object_.items()) {
      if (std::ranges::find(keys, key) == keys.end()) {
        return invalid(where_ + " has unknown key '" + key + "'");
      }
    }
    return {};
  }

  const json* find(std::string_view key) const {
    auto it = object_.find(std::string(key));
    return it == object_.end() ? nullptr : &*it;
  }

  Result<std::string> required_text(std::string_view key) const {
    const json* value = find(key);
    if (!value) {
      return invalid(where_ + " is missing required key '" + std::string(key) +
                     "'");
    }
    if (!value->is_string()) return wrong_type(key, "a string");
    return value->get<std::string>();
  }

  // Absent or null: `fallback`.
  Result<std::string> text_or(std::string_view key,
                              std::string_view fallback) const {
    const json* value = find(key);
    if (!value || value->is_null()) return std::string(fallback);
    if (!value->is_string()) return wrong_type(key, "a string");
    return value->get<std::string>();
  }

  Result<std::optional<std::string>> nullable_text(std::string_view key) const {
    const json* value = find(key);
    if (!value || value->is_null()) return std::optional<std::string>{};
    if (!value->is_string()) return wrong_type(key, "a string or null");
    return std::optional<std::string>(value->get<std::string>());
  }

  // Absent or null: "{}".
  Result<JsonText> object_text(std::string_view key) const {
    const json* value = find(key);
    if (!value || value->is_null()) return JsonText("{}");
    if (!value->is_object()) return wrong_type(key, "an object");
    return value->dump();
  }

  std::unexpected<Error> wrong_type(std::string_view key,
                                    std::string_view type) const {
    return invalid(where_ + " field '" + std::string(key) + "' must be " +
                   std::string(type));
  }

 private:
  const json& object_;
  std::string where_;
};

#define PARLEY_TASK_TRY(target, expression)                           \
  do {                                                                \
    auto parsed_ = (expression);                                      \
    if (!parsed_) return std::unexpected(std::move(parsed_).error()); \
    target = std::move(*parsed_);                                     \
  } while (false)

Result<TaskSpec> spec_from_json(const json& value) {
  if (!value.is_object()) return invalid("task field 'spec' must be an object");
  Fields fields(value, "task.spec");
  if (auto ok = fields.only({"title", "description", "payload", "capability"});
      !ok) {
    return std::unexpected(ok.error());
  }
  TaskSpec spec;
  PARLEY_TASK_TRY(spec.title, fields.required_text("title"));
  PARLEY_TASK_TRY(spec.description, fields.text_or("description", ""));
  PARLEY_TASK_TRY(spec.payload, fields.object_text("payload"));
  PARLEY_TASK_TRY(spec.capability, fields.nullable_text("capability"));
  return spec;
}

}  // namespace

std::string invalid_task_state_message(std::string_view state) {
  return "'" + std::string(state) + "' is not a valid TaskState";
}

json to_json(const TaskMetadata& task) {
  return {
      {"task_id", task.task_id},
      {"owner_id", task.owner_id},
      {"spec",
       {{"title", task.spec.title},
        {"description", task.spec.description},
        {"payload", json::parse(task.spec.payload)},
        {"capability", optional_text(task.spec.capability)}}},
      {"state", task.state},
      {"created_at", task.created_at},
      {"started_at", optional_text(task.started_at)},
      {"completed_at", optional_text(task.completed_at)},
      {"expires_at", optional_text(task.expires_at)},
      {"last_progress_at", optional_text(task.last_progress_at)},
      {"progress", json::parse(task.progress)},
      {"result", json::parse(task.result)},
      {"error", task.error},
      {"channel_id", optional_text(task.channel_id)},
  };
}

Result<TaskMetadata> task_from_json(const json& value) {
  if (!value.is_object()) return invalid("task must be a JSON object");
  Fields fields(value, "task");
  if (auto ok = fields.only({"task_id", "owner_id", "spec", "state",
                             "created_at", "started_at", "completed_at",
                             "expires_at", "last_progress_at", "progress",
                             "result", "error", "channel_id"});
      !ok) {
    return std::unexpected(ok.error());
  }
  TaskMetadata task;
  PARLEY_TASK_TRY(task.task_id, fields.required_text("task_id"));
  PARLEY_TASK_TRY(task.owner_id, fields.required_text("owner_id"));
  const json* spec = fields.find("spec");
  if (!spec) return invalid("task is missing required key 'spec'");
  PARLEY_TASK_TRY(task.spec, spec_from_json(*spec));
  PARLEY_TASK_TRY(task.state, fields.text_or("state", task_state::kCreated));
  if (!is_task_state(task.state)) {
    return invalid(invalid_task_state_message(task.state));
  }
  PARLEY_TASK_TRY(task.created_at, fields.text_or("created_at", ""));
  PARLEY_TASK_TRY(task.started_at, fields.nullable_text("started_at"));
  PARLEY_TASK_TRY(task.completed_at, fields.nullable_text("completed_at"));
  PARLEY_TASK_TRY(task.expires_at, fields.nullable_text("expires_at"));
  PARLEY_TASK_TRY(task.last_progress_at,
                  fields.nullable_text("last_progress_at"));
  PARLEY_TASK_TRY(task.progress, fields.object_text("progress"));
  if (const json* result = fields.find("result")) task.result = result->dump();
  PARLEY_TASK_TRY(task.error, fields.text_or("error", ""));
  PARLEY_TASK_TRY(task.channel_id, fields.nullable_text("channel_id"));
  return task;
}

}  // namespace parley::engine
