// AG2's TaskMetadata JSON <-> TaskMetadata. Only the op layer, the log-record
// builders and the task fold include this header.
//
// Writing emits exactly AG2's keys, sorted (nlohmann::json order), as
// engine/json/records_json.h does for the other records.
//
// Reading is strict, like the other record readers: an unknown key, a
// missing required key or a value of the wrong JSON type fails with
// kInvalid naming the object and field ("task has unknown key 'foo'",
// "task is missing required key 'spec'", "task.spec field 'title' must be
// a string"). Required: task_id, owner_id, spec; within spec, title.
// `state` must be one of AG2's six TaskState values ("'<x>' is not a valid
// TaskState"). `payload` and `progress` must be objects; `result` is any
// JSON value.
#pragma once

#include <nlohmann/json.hpp>

#include "engine/base/error.h"
#include "engine/tasks/task.h"

namespace parley::engine {

nlohmann::json to_json(const TaskMetadata& task);
Result<TaskMetadata> task_from_json(const nlohmann::json& value);

// The message AG2's TaskState(<x>) raises for an unknown state.
std::string invalid_task_state_message(std::string_view state);

}  // namespace parley::engine
