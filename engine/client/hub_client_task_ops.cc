// HubClient's typed calls on tasks and their checkpoints.
#include "engine/client/hub_client.h"
#include "engine/client/hub_client_calls.h"
#include "engine/json/records_json.h"
#include "engine/json/task_json.h"

namespace parley::client {

using nlohmann::json;

namespace {

engine::Result<engine::TaskMetadata> task_from(const json& value) {
  return engine::task_from_json(value);
}

}  // namespace

void HubClient::get_task(std::string task_id,
                         Handler<engine::TaskMetadata> done) {
  calls::start(impl_, "get_task", {{"task_id", std::move(task_id)}},
               calls::parsed<engine::TaskMetadata>(std::move(done), task_from));
}

void HubClient::list_tasks(engine::TaskFilter filter,
                           Handler<std::vector<engine::TaskMetadata>> done) {
  json params{{"limit", filter.limit}};
  if (filter.owner_id) params["agent_id"] = std::move(*filter.owner_id);
  if (filter.channel_id) params["channel_id"] = std::move(*filter.channel_id);
  if (filter.state) params["state"] = std::move(*filter.state);
  calls::start(impl_, "list_tasks", std::move(params),
               calls::parsed<std::vector<engine::TaskMetadata>>(
                   std::move(done), calls::list_of<engine::TaskMetadata>(
                                        "list_tasks", task_from)));
}

void HubClient::observe_task(engine::TaskMetadata metadata,
                             Handler<void> done) {
  calls::start_built(
      impl_, "observe_task",
      [&] {
        return json{{"metadata", engine::to_json(metadata)}};
      },
      calls::ignored(std::move(done)));
}

void HubClient::update_task(std::string task_id, engine::TaskUpdate update,
                            Handler<void> done) {
  calls::start_built(
      impl_, "update_task",
      [&] {
        json params{{"task_id", std::move(task_id)}};
        if (update.state) params["state"] = std::move(*update.state);
        if (update.progress) params["progress"] = json::parse(*update.progress);
        if (update.result) params["result"] = json::parse(*update.result);
        if (update.error) params["error"] = std::move(*update.error);
        return params;
      },
      calls::ignored(std::move(done)));
}

void HubClient::fire_task_event(std::string task_id, std::string kind,
                                std::string payload_json, Handler<void> done) {
  calls::start_built(
      impl_, "fire_task_event",
      [&] {
        return json{{"task_id", std::move(task_id)},
                    {"kind", std::move(kind)},
                    {"payload", json::parse(payload_json)}};
      },
      calls::ignored(std::move(done)));
}

void HubClient::checkpoint_task(std::string task_id, std::string state_json,
                                Handler<void> done) {
  calls::start_built(
      impl_, "checkpoint_task",
      [&] {
        return json{{"task_id", std::move(task_id)},
                    {"state", json::parse(state_json)}};
      },
      calls::ignored(std::move(done)));
}

void HubClient::read_task_checkpoint(std::string task_id,
                                     Handler<std::optional<std::string>> done) {
  calls::start(
      impl_, "read_task_checkpoint", {{"task_id", std::move(task_id)}},
      calls::parsed<std::optional<std::string>>(
          std::move(done),
          [](const json& value) -> engine::Result<std::optional<std::string>> {
            if (value.is_null()) return std::nullopt;
            return engine::dump_compact(value);
          }));
}

}  // namespace parley::client
