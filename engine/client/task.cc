#include "engine/client/task.h"

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "engine/base/clock.h"
#include "engine/base/ids.h"
#include "engine/client/agent_client.h"
#include "engine/client/hub_client.h"

namespace parley::client {

namespace {

namespace net = boost::asio;
using nlohmann::json;

// `text` when it is a JSON object, else "{}".
std::string object_or_empty(std::string_view text) {
  json value = json::parse(text, nullptr, false);
  return value.is_object() ? value.dump() : "{}";
}

}  // namespace

Task::Task(PrivateTag, std::shared_ptr<AgentClient> owner, std::string task_id,
           TaskSpec spec)
    : owner_(std::move(owner)),
      task_id_(std::move(task_id)),
      spec_(std::move(spec)) {}

void Task::start(std::shared_ptr<AgentClient> owner, TaskSpec spec,
                 std::optional<std::string> channel_id,
                 Handler<std::shared_ptr<Task>> done) {
  const std::string now = engine::format_timestamp(engine::SystemClock().now());
  engine::TaskMetadata metadata{
      .task_id = engine::new_id(),
      .owner_id = owner->agent_id(),
      .spec = {.title = spec.title,
               .description = spec.description,
               .payload = object_or_empty(spec.payload_json),
               .capability = spec.capability},
      .state = "running",
      .created_at = now,
      .started_at = now,
      .channel_id = std::move(channel_id)};
  auto task = std::make_shared<Task>(PrivateTag{}, owner, metadata.task_id,
                                     std::move(spec));
  owner->hub_client()->observe_task(
      std::move(metadata),
      [task, done = std::move(done)](Result<void> observed) {
        if (!observed) return done(std::unexpected(observed.error()));
        done(task);
      });
}

void Task::progress(std::string payload_json, Handler<void> done) {
  update({.progress = object_or_empty(payload_json)}, std::move(done));
}

void Task::complete(std::optional<std::string> result_json,
                    Handler<void> done) {
  engine::TaskUpdate completed{.state = "completed"};
  if (result_json) {
    json result = json::parse(*result_json, nullptr, false);
    if (result.is_discarded()) {
      return done(client_error(code::kInvalid, "result must be JSON text"));
    }
    completed.result = result.dump();
  }
  update(std::move(completed), std::move(done));
}

void Task::fail(std::string error, Handler<void> done) {
  update({.state = "failed", .error = std::move(error)}, std::move(done));
}

void Task::cancel(std::string reason, Handler<void> done) {
  engine::TaskUpdate cancelled{.state = "cancelled"};
  if (!reason.empty()) cancelled.error = std::move(reason);
  update(std::move(cancelled), std::move(done));
}

void Task::update(engine::TaskUpdate update, Handler<void> done) {
  net::post(owner_->hub_client()->executor(), [self = shared_from_this(),
                                               update = std::move(update),
                                               done = std::move(done)] {
    if (self->ended_) {
      return done(client_error(
          code::kInvalid,
          "task " + self->task_id_ + " is already " + *self->ended_));
    }
    const std::optional<std::string> terminal =
        update.state && engine::is_terminal_task_state(*update.state)
            ? update.state
            : std::nullopt;
    if (terminal) self->ended_ = terminal;
    self->owner_->hub_client()->update_task(
        self->task_id_, update, [self, terminal, done](Result<void> updated) {
          if (!updated) return done(std::unexpected(updated.error()));
          if (!terminal || !self->spec_.capability) return done({});
          self->owner_->hub_client()->record_observation(
              {.owner_id = self->owner_->agent_id(),
               .capability = *self->spec_.capability,
               .outcome = *terminal,
               .latency_ms =
                   std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - self->started_)
                       .count(),
               .task_id = self->task_id_},
              done);
        });
  });
}

}  // namespace parley::client
