#include "engine/client/task.h"

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "engine/base/clock.h"
#include "engine/base/ids.h"
#include "engine/client/agent_client.h"

namespace parley::client {

namespace {

namespace net = boost::asio;
using nlohmann::json;

json object_or_empty(std::string_view text) {
  json value = json::parse(text, nullptr, false);
  return value.is_object() ? value : json::object();
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
  const json metadata{
      {"task_id", engine::new_id()},
      {"owner_id", owner->agent_id()},
      {"spec",
       {{"title", spec.title},
        {"description", spec.description},
        {"payload", object_or_empty(spec.payload_json)},
        {"capability", spec.capability ? json(*spec.capability) : json()}}},
      {"state", "running"},
      {"created_at", now},
      {"started_at", now},
      {"channel_id", channel_id ? json(*channel_id) : json()}};
  auto task = std::make_shared<Task>(PrivateTag{}, owner,
                                     metadata["task_id"].get<std::string>(),
                                     std::move(spec));
  owner->hub_client()->call(
      "observe_task", json{{"metadata", metadata}}.dump(),
      [task, done = std::move(done)](Result<std::string> observed) {
        if (!observed) return done(std::unexpected(observed.error()));
        done(task);
      });
}

void Task::progress(std::string payload_json, Handler<void> done) {
  update(json{{"progress", object_or_empty(payload_json)}}.dump(), std::nullopt,
         std::move(done));
}

void Task::complete(std::optional<std::string> result_json,
                    Handler<void> done) {
  json params{{"state", "completed"}};
  if (result_json) {
    json result = json::parse(*result_json, nullptr, false);
    if (result.is_discarded()) {
      return done(client_error(code::kInvalid, "result must be JSON text"));
    }
    params["result"] = std::move(result);
  }
  update(params.dump(), "completed", std::move(done));
}

void Task::fail(std::string error, Handler<void> done) {
  update(json{{"state", "failed"}, {"error", std::move(error)}}.dump(),
         "failed", std::move(done));
}

void Task::cancel(std::string reason, Handler<void> done) {
  update(json{{"state", "cancelled"},
              {"error", reason.empty() ? json() : json(std::move(reason))}}
             .dump(),
         "cancelled", std::move(done));
}

void Task::update(std::string params_json, std::optional<std::string> terminal,
                  Handler<void> done) {
  net::post(owner_->hub_client()->executor(),
            [self = shared_from_this(), params_json, terminal,
             done = std::move(done)] {
              if (self->ended_) {
                return done(client_error(
                    code::kInvalid,
                    "task " + self->task_id_ + " is already " + *self->ended_));
              }
              if (terminal) self->ended_ = terminal;
              json params = json::parse(params_json);
              params["task_id"] = self->task_id_;
              self->owner_->hub_client()->call(
                  "update_task", params.dump(),
                  [self, terminal, done](Result<std::string> updated) {
                    if (!updated) return done(std::unexpected(updated.error()));
                    if (!terminal || !self->spec_.capability) return done({});
                    const double latency_ms =
                        std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - self->started_)
                            .count();
                    self->owner_->hub_client()->call(
                        "record_observation",
                        json{{"owner_id", self->owner_->agent_id()},
                             {"capability", *self->spec_.capability},
                             {"outcome", *terminal},
                             {"latency_ms", latency_ms},
                             {"task_id", self->task_id_}}
                            .dump(),
                        [done](Result<std::string> recorded) {
                          if (!recorded)
                            return done(std::unexpected(recorded.error()));
                          done({});
                        });
                  });
            });
}

}  // namespace parley::client
