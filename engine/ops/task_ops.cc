#include "engine/ops/task_ops.h"

#include <limits>

#include "engine/json/task_json.h"

namespace parley::engine::op_layer {

namespace {

// The keys a mirror_failed payload may carry over the wire.
constexpr std::string_view kMirrorFailedKeys[] = {
    "op", "owner_id", "channel_id", "exc_type", "exc_message"};
constexpr std::size_t kMaxTaskEventText = 500;

// Every task id an op names must be one path segment (is_valid_task_id),
// else protocol_error.
Result<std::string> task_id_param(const Params& params) {
  PARLEY_TRY(task_id, params.text("task_id"));
  if (!is_valid_task_id(task_id)) {
    return invalid_task_id(task_id);
  }
  return task_id;
}

// The agents of a wire request's connection, copied for a Mutation; none
// for an in-process call.
std::optional<std::vector<std::string>> connection_of(const WireRequest* wire) {
  if (!wire) return std::nullopt;
  return wire->agents;
}

std::optional<ConnectionAgents> view(
    const std::optional<std::vector<std::string>>& connection) {
  if (!connection) return std::nullopt;
  return ConnectionAgents(*connection);
}

// Over the wire a task the connection may not see is "not found", as an
// unknown id is.
Result<json> get_task_op(Hub& hub, const Params& params,
                         const WireRequest* wire) {
  PARLEY_CHECK(params.only({"task_id"}));
  PARLEY_TRY(task_id, task_id_param(params));
  PARLEY_TRY(task, hub.get_task(task_id));
  if (wire && !sees_task(hub, *wire, task)) {
    return not_found("task not found: " + task_id);
  }
  return to_json(task);
}

// Over the wire: the tasks the connection may see, then `limit`.
Result<json> list_tasks_op(Hub& hub, const Params& params,
                           const WireRequest* wire) {
  PARLEY_CHECK(params.only({"agent_id", "channel_id", "state", "limit"}));
  PARLEY_TRY(agent_id, params.optional_text("agent_id"));
  PARLEY_TRY(channel_id, params.optional_text("channel_id"));
  PARLEY_TRY(state, params.optional_text("state"));
  PARLEY_TRY(limit_param, params.optional_integer("limit"));
  const auto limit = static_cast<std::size_t>(
      std::max<std::int64_t>(0, limit_param.value_or(50)));
  TaskFilter filter{.owner_id = std::move(agent_id),
                    .channel_id = std::move(channel_id),
                    .state = std::move(state),
                    .limit = limit};
  if (!wire) return list_json(hub.list_tasks(filter));
  filter.limit = std::numeric_limits<std::size_t>::max();
  std::vector<TaskMetadata> visible;
  for (TaskMetadata& task : hub.list_tasks(filter)) {
    if (visible.size() >= limit) break;
    if (sees_task(hub, *wire, task)) visible.push_back(std::move(task));
  }
  return list_json(visible);
}

Result<Answer> observe_task_op(Hub& hub, const Params& params,
                               const WireRequest* wire) {
  PARLEY_CHECK(params.only({"metadata"}));
  PARLEY_TRY(metadata_json, params.object("metadata"));
  if (auto id = metadata_json.find("task_id");
      id != metadata_json.end() && id->is_string() &&
      !is_valid_task_id(id->get<std::string>())) {
    return invalid_task_id(id->get<std::string>());
  }
  PARLEY_TRY(metadata, task_from_json(metadata_json));
  return mutation(
      [&hub, metadata = std::move(metadata), connection = connection_of(wire)](
          Done<void> done, Dispatch dispatch) mutable {
        hub.observe_task(std::move(metadata), view(connection), std::move(done),
                         dispatch);
      });
}

Result<Answer> update_task_op(Hub& hub, const Params& params,
                              const WireRequest* wire) {
  PARLEY_CHECK(
      params.only({"task_id", "state", "progress", "result", "error"}));
  PARLEY_TRY(task_id, task_id_param(params));
  TaskUpdate update;
  PARLEY_TRY(state, params.optional_text("state"));
  PARLEY_TRY(progress, params.optional_object("progress"));
  PARLEY_TRY(error, params.optional_text("error"));
  update.state = std::move(state);
  if (progress) update.progress = progress->dump();
  if (const json* result = params.optional("result")) {
    update.result = result->dump();
  }
  update.error = std::move(error);
  return mutation(
      [&hub, task_id = std::move(task_id), update = std::move(update),
       connection = connection_of(wire)](Done<void> done, Dispatch dispatch) {
        hub.update_task(task_id, update, view(connection), std::move(done),
                        dispatch);
      });
}

// Over the wire only the mirror's own failure report ("mirror_failed") is
// accepted: other kinds would forge terminal events.
Result<json> fire_task_event_op(Hub& hub, const Params& params,
                                const WireRequest* wire) {
  PARLEY_CHECK(params.only({"task_id", "kind", "payload"}));
  PARLEY_TRY(task_id, task_id_param(params));
  PARLEY_TRY(kind, params.text("kind"));
  PARLEY_TRY(payload_param, params.optional_object("payload"));
  if (kind != "mirror_failed") {
    return access_denied(
        "only 'mirror_failed' task events are accepted over the wire, got '" +
        kind + "'");
  }
  json payload = payload_param.value_or(json::object());
  for (auto& [key, value] : payload.items()) {
    if (std::ranges::find(kMirrorFailedKeys, key) ==
        std::end(kMirrorFailedKeys)) {
      return protocol_error(
          "mirror_failed payload keys must be within ['op', 'owner_id', "
          "'channel_id', 'exc_type', 'exc_message']");
    }
    if (value.is_string() &&
        value.get_ref<const std::string&>().size() > kMaxTaskEventText) {
      value = value.get<std::string>().substr(0, kMaxTaskEventText);
    }
  }
  if (!payload.contains("owner_id") || !payload["owner_id"].is_string()) {
    return protocol_error(
        "mirror_failed payload needs the reporting agent's owner_id");
  }
  if (wire) {
    PARLEY_CHECK(authorize_mirror_failed(hub, *wire, task_id, payload));
  }
  auto task = hub.get_task(task_id);
  if (task && (task->owner_id != payload["owner_id"] ||
               (payload.contains("channel_id") &&
                !(task->channel_id ? payload["channel_id"] == *task->channel_id
                                   : payload["channel_id"].is_null())))) {
    return access_denied("mirror_failed for task '" + task_id +
                         "' must carry its own owner and channel");
  }
  hub.fire_task_event(task_id, kind, payload);
  return json(nullptr);
}

Result<Answer> checkpoint_task_op(Hub& hub, const Params& params,
                                  const WireRequest* wire) {
  PARLEY_CHECK(params.only({"task_id", "state"}));
  PARLEY_TRY(task_id, task_id_param(params));
  PARLEY_TRY(state, params.object("state"));
  return mutation([&hub, task_id = std::move(task_id), state = state.dump(),
                   connection = connection_of(wire)](
                      Done<void> done, Dispatch dispatch) mutable {
    hub.checkpoint_task(task_id, std::move(state), view(connection),
                        std::move(done), dispatch);
  });
}

Result<json> read_task_checkpoint_op(Hub& hub, const Params& params,
                                     const WireRequest* wire) {
  PARLEY_CHECK(params.only({"task_id"}));
  PARLEY_TRY(task_id, task_id_param(params));
  PARLEY_TRY(state, wire ? hub.read_task_checkpoint(task_id, wire->agents)
                         : hub.read_task_checkpoint(task_id));
  return state ? json::parse(*state) : json(nullptr);
}

}  // namespace

void add_task_ops(OpTable& table) {
  table.emplace("get_task", get_task_op);
  table.emplace("list_tasks", list_tasks_op);
  table.emplace("observe_task", observe_task_op);
  table.emplace("update_task", update_task_op);
  table.emplace("fire_task_event", fire_task_event_op);
  table.emplace("checkpoint_task", checkpoint_task_op);
  table.emplace("read_task_checkpoint", read_task_checkpoint_op);
}

}  // namespace parley::engine::op_layer
