// The `tasks` plugin tool (engine/client/network_tools.h).
#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "engine/base/event_types.h"
#include "engine/base/python_repr.h"
#include "engine/client/agent_client.h"
#include "engine/client/envelopes.h"
#include "engine/client/network_tools.h"
#include "engine/client/task.h"
#include "engine/client/tool_support.h"

namespace parley::client {

namespace {

namespace net = boost::asio;
using nlohmann::json;
using tools::error_result;
using tools::member;

bool is_terminal(const json& task) {
  const json state = task.value("state", json());
  return state == "completed" || state == "failed" || state == "expired" ||
         state == "cancelled";
}

// AG2's _task_summary, from the wire's task metadata.
json summary_of(const json& task) {
  const json spec = member(task, "spec");
  return {{"task_id", member(task, "task_id")},
          {"owner_id", member(task, "owner_id")},
          {"title", member(spec, "title")},
          {"capability", member(spec, "capability")},
          {"state", member(task, "state")},
          {"created_at", member(task, "created_at")},
          {"started_at", member(task, "started_at")},
          {"completed_at", member(task, "completed_at")},
          {"expires_at", member(task, "expires_at")},
          {"last_progress_at", member(task, "last_progress_at")},
          {"result", member(task, "result")},
          {"error", member(task, "error")}};
}

// get_task; `found` with the task's JSON, else AG2's not-found text.
template <typename Found>
void with_task(const TurnDependencies& dependencies, const std::string& task_id,
               Handler<ToolResult> done, Found found) {
  dependencies.agent_client->hub_client()->call(
      "get_task", json{{"task_id", task_id}}.dump(),
      [task_id, done = std::move(done), found](Result<std::string> text) {
        const json task = text ? json::parse(*text, nullptr, false) : json();
        if (!task.is_object()) {
          return done(error_result("task " + engine::python_repr(task_id) +
                                   " not found"));
        }
        found(task, done);
      });
}

void active(std::string_view action, const json& arguments,
            const TurnDependencies& dependencies, Handler<ToolResult> done) {
  const std::shared_ptr<Task> task = dependencies.task;
  if (!task) {
    return done(error_result(std::string(action) +
                             " requires an active `agent.task(...)` block"));
  }
  auto answered = [task, action = std::string(action),
                   done = std::move(done)](Result<void> result) {
    if (!result) return done(error_result(action + " failed", result.error()));
    done(ToolResult{.text = action == "progress"
                                ? "progress emitted on " + task->task_id()
                                : "completed " + task->task_id()});
  };
  if (action == "progress") {
    const json payload = member(arguments, "payload");
    return task->progress(payload.is_object() ? payload.dump() : "{}",
                          std::move(answered));
  }
  const auto result = arguments.find("result");
  task->complete(result == arguments.end()
                     ? std::nullopt
                     : std::optional<std::string>(result->dump()),
                 std::move(answered));
}

void progress(const json& arguments, const TurnDependencies& dependencies,
              Handler<ToolResult> done) {
  active("progress", arguments, dependencies, std::move(done));
}

void complete(const json& arguments, const TurnDependencies& dependencies,
              Handler<ToolResult> done) {
  active("complete", arguments, dependencies, std::move(done));
}

void list(const json& arguments, const TurnDependencies& dependencies,
          Handler<ToolResult> done) {
  const bool own = tools::text(arguments, "scope").value_or("own") != "all";
  const bool all_states = tools::text(arguments, "state") == "all";
  const auto limit = static_cast<std::size_t>(
      std::max<std::int64_t>(0, tools::integer(arguments, "limit", 20)));
  json params{{"limit", limit * 4}};
  if (own) params["agent_id"] = dependencies.agent_client->agent_id();
  dependencies.agent_client->hub_client()->call(
      "list_tasks", params.dump(),
      [all_states, limit, done = std::move(done)](Result<std::string> listed) {
        if (!listed) return done(error_result("list failed", listed.error()));
        json results = json::array();
        for (const json& task : json::parse(*listed, nullptr, false)) {
          if (results.size() >= limit) break;
          if (!task.is_object() || (!all_states && is_terminal(task))) continue;
          results.push_back(summary_of(task));
        }
        done(tools::json_result(results));
      });
}

// wait: get_task every poll interval until terminal or the deadline.
struct Waiting : std::enable_shared_from_this<Waiting> {
  TurnDependencies dependencies;
  std::string task_id;
  std::string timeout_text;
  std::chrono::steady_clock::time_point deadline;
  std::chrono::steady_clock::duration poll;
  net::steady_timer timer;
  Handler<ToolResult> done;

  explicit Waiting(net::any_io_executor executor) : timer(executor) {}

  void check() {
    with_task(
        dependencies, task_id, done,
        [self = shared_from_this()](const json& task,
                                    const Handler<ToolResult>& done) {
          if (is_terminal(task)) {
            return done(tools::json_result(summary_of(task)));
          }
          if (std::chrono::steady_clock::now() + self->poll >= self->deadline) {
            return done(error_result(
                "task " + engine::python_repr(self->task_id) +
                " did not complete within " + self->timeout_text + "s"));
          }
          self->timer.expires_after(self->poll);
          self->timer.async_wait([self](boost::system::error_code ec) {
            if (!ec) self->check();
          });
        });
  }
};

void wait(const json& arguments, const TurnDependencies& dependencies,
          Handler<ToolResult> done) {
  const auto task_id = tools::text(arguments, "task_id");
  if (!task_id || task_id->empty()) {
    return done(error_result("wait requires `task_id`"));
  }
  auto waiting = std::make_shared<Waiting>(
      dependencies.agent_client->hub_client()->executor());
  const tools::Seconds timeout =
      tools::seconds(arguments, "timeout", {300, "300.0"});
  const tools::Seconds poll =
      tools::seconds(arguments, "poll_interval", {0.1, "0.1"});
  waiting->dependencies = dependencies;
  waiting->task_id = *task_id;
  waiting->timeout_text = timeout.text;
  waiting->deadline =
      std::chrono::steady_clock::now() + tools::wait_duration(timeout.value);
  waiting->poll = tools::wait_duration(poll.value);
  waiting->done = std::move(done);
  waiting->check();
}

void status(const json& arguments, const TurnDependencies& dependencies,
            Handler<ToolResult> done) {
  const auto task_id = tools::text(arguments, "task_id");
  if (!task_id || task_id->empty()) {
    return done(error_result("status requires `task_id`"));
  }
  with_task(dependencies, *task_id, std::move(done),
            [](const json& task, const Handler<ToolResult>& done) {
              done(tools::json_result(summary_of(task)));
            });
}

void cancel(const json& arguments, const TurnDependencies& dependencies,
            Handler<ToolResult> done) {
  const auto task_id = tools::text(arguments, "task_id");
  if (!task_id || task_id->empty()) {
    return done(error_result("cancel requires `task_id`"));
  }
  const std::string reason = tools::text(arguments, "reason").value_or("");
  auto client = dependencies.agent_client;
  with_task(
      dependencies, *task_id, std::move(done),
      [client, id = *task_id, reason](const json& task,
                                      const Handler<ToolResult>& done) {
        const std::string quoted = engine::python_repr(id);
        if (is_terminal(task)) {
          return done(
              ToolResult{.text = "task " + quoted + " is already " +
                                 member(task, "state").get<std::string>()});
        }
        const json channel = member(task, "channel_id");
        if (!channel.is_string() || channel.get<std::string>().empty()) {
          return done(error_result(
              "task " + quoted +
              " has no associated channel; cancel_request envelopes "
              "need a channel to ride on"));
        }
        const std::string owner =
            member(task, "owner_id").is_string()
                ? member(task, "owner_id").get<std::string>()
                : "";
        auto request =
            make_envelope(channel.get<std::string>(), client->agent_id(),
                          std::string(event_type::kTaskCancelRequest),
                          json{{"task_id", id}, {"reason", reason}}.dump(),
                          std::vector{owner});
        if (!request) {
          return done(
              error_result("cancel_request post failed", request.error()));
        }
        request->task_id = id;
        client->hub_client()->post_envelope(
            std::move(*request), [owner, id, done](Result<std::string> posted) {
              if (!posted) {
                return done(
                    error_result("cancel_request post failed", posted.error()));
              }
              done(ToolResult{.text = "cancel_request posted to " + owner +
                                      " for task " + id});
            });
      });
}

}  // namespace

Tool tasks_tool() {
  ToolSchema schema{
      .name = "tasks",
      .description =
          "Task lifecycle. In your own active task: progress (payload), "
          "complete (result?). Any task: list (scope=own|all, "
          "state=active|all, limit), status (task_id), wait (task_id, "
          "timeout=300, poll_interval=0.1), cancel (task_id, reason?: asks "
          "the owner to cancel).",
      .parameters =
          R"j({"type":"object","properties":{)j"
          R"j("action":{"type":"string","enum":["progress","complete","list","status","wait","cancel"]},)j"
          R"j("payload":{"type":["object","null"],"description":"progress: what to report"},)j"
          R"j("result":{"description":"complete: the task's result, any JSON"},)j"
          R"j("task_id":{"type":["string","null"]},)j"
          R"j("reason":{"type":"string","description":"cancel: why"},)j"
          R"j("scope":{"type":"string","enum":["own","all"],"description":"list: default own"},)j"
          R"j("state":{"type":"string","enum":["active","all"],"description":"list: default active"},)j"
          R"j("timeout":{"type":"number","description":"wait: seconds (default 300)"},)j"
          R"j("poll_interval":{"type":"number","description":"wait: seconds between checks (default 0.1)"},)j"
          R"j("limit":{"type":"integer","description":"list: at most this many (default 20)"}},)j"
          R"j("required":["action"]})j"};
  auto run = [](std::string arguments_json,
                const TurnDependencies& dependencies,
                Handler<ToolResult> done) {
    tools::dispatch(arguments_json, dependencies, std::move(done),
                    {{"progress", progress},
                     {"complete", complete},
                     {"list", list},
                     {"status", status},
                     {"wait", wait},
                     {"cancel", cancel}});
  };
  return {std::move(schema), std::move(run)};
}

}  // namespace parley::client
