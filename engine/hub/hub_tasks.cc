// The facade's task and audit calls (engine/hub/hub.h), handed to the
// parts that do them.
#include <nlohmann/json.hpp>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/hub/committer.h"
#include "engine/hub/dispatch.h"
#include "engine/hub/hub.h"
#include "engine/hub/hub_core.h"
#include "engine/hub/identities.h"
#include "engine/hub/state_reads.h"
#include "engine/hub/task_mutations.h"

namespace parley::engine {

Result<std::vector<JsonText>> Hub::read_audit() const {
  return reads_->read_audit();
}

Result<void> Hub::append_audit(std::string_view json_object) {
  return run_inline<void>([&](Done<void> done) {
    append_audit(json_object, std::move(done), Dispatch::kInline);
  });
}

void Hub::append_audit(std::string_view json_object, Done<void> done,
                       Dispatch dispatch) {
  run(*committer_, identities_->append_audit(std::string(json_object)),
      std::move(done), dispatch);
}

Result<void> Hub::observe_task(TaskMetadata metadata,
                               std::optional<ConnectionAgents> connection) {
  return run_inline<void>([&](Done<void> done) {
    observe_task(std::move(metadata), connection, std::move(done),
                 Dispatch::kInline);
  });
}

void Hub::observe_task(TaskMetadata metadata,
                       std::optional<ConnectionAgents> connection,
                       Done<void> done, Dispatch dispatch) {
  run(*committer_, tasks_->observe_task(std::move(metadata), connection),
      std::move(done), dispatch);
}

Result<void> Hub::update_task(std::string_view task_id,
                              const TaskUpdate& update,
                              std::optional<ConnectionAgents> connection) {
  return run_inline<void>([&](Done<void> done) {
    update_task(task_id, update, connection, std::move(done),
                Dispatch::kInline);
  });
}

void Hub::update_task(std::string_view task_id, const TaskUpdate& update,
                      std::optional<ConnectionAgents> connection,
                      Done<void> done, Dispatch dispatch) {
  run(*committer_,
      tasks_->update_task(std::string(task_id), update, connection),
      std::move(done), dispatch);
}

Result<TaskMetadata> Hub::get_task(std::string_view task_id) const {
  return reads_->get_task(task_id);
}

std::vector<TaskMetadata> Hub::list_tasks(const TaskFilter& filter) const {
  return reads_->list_tasks(filter);
}

Result<void> Hub::checkpoint_task(std::string_view task_id, JsonText state,
                                  std::optional<ConnectionAgents> connection) {
  return run_inline<void>([&](Done<void> done) {
    checkpoint_task(task_id, std::move(state), connection, std::move(done),
                    Dispatch::kInline);
  });
}

void Hub::checkpoint_task(std::string_view task_id, JsonText state,
                          std::optional<ConnectionAgents> connection,
                          Done<void> done, Dispatch dispatch) {
  run(*committer_,
      tasks_->checkpoint_task(std::string(task_id), std::move(state),
                              connection),
      std::move(done), dispatch);
}

Result<std::optional<JsonText>> Hub::read_task_checkpoint(
    std::string_view task_id,
    std::optional<ConnectionAgents> connection) const {
  return reads_->read_task_checkpoint(task_id, std::move(connection));
}

Result<void> Hub::check_task_access(std::string_view task_id,
                                    ConnectionAgents connection) const {
  return reads_->check_task_access(task_id, connection);
}

std::optional<std::vector<std::string>> Hub::checkpoint_writers(
    std::string_view task_id) const {
  return reads_->checkpoint_writers(task_id);
}

void Hub::fire_task_event(std::string_view task_id, std::string_view kind,
                          const nlohmann::json& payload) {
  core_->tell([&](HubListener& listener) {
    listener.on_task_event(task_id, kind, payload);
  });
}

Result<std::string> Hub::request_task_cancel(std::string_view requester_id,
                                             std::string_view task_id,
                                             std::string_view reason) {
  auto task = get_task(task_id);
  if (!task) return std::unexpected(task.error());
  if (task->terminal()) {
    return protocol_error("task '" + std::string(task_id) + "' is already " +
                          task->state + "; nothing to cancel");
  }
  if (!task->channel_id) {
    return protocol_error("task '" + std::string(task_id) +
                          "' has no channel to carry a cancel request");
  }
  Envelope envelope;
  envelope.channel_id = *task->channel_id;
  envelope.sender_id = std::string(requester_id);
  envelope.audience = std::vector{task->owner_id};
  envelope.event_type = std::string(event_type::kTaskCancelRequest);
  auto data = to_flex({{"task_id", task_id}, {"reason", reason}});
  if (!data) return std::unexpected(data.error());
  envelope.event_data = std::move(*data);
  envelope.task_id = std::string(task_id);
  return post_envelope(std::move(envelope));
}

}  // namespace parley::engine
