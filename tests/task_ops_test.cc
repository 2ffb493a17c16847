// The task ops' JSON shapes, argument checks (task ids one path segment,
// over the wire only mirror_failed task events) and AG2 semantics, and
// tasks driven by a `parley exec` script.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "engine/json/task_json.h"
#include "engine/tasks/task.h"
#include "log/rocksdb_log_store.h"
#include "tests/hub_fixture.h"
#include "tests/task_test_support.h"
#include "tests/test_support.h"
#include "tools/script_runner.h"

namespace parley {
namespace {

using engine::ErrorKind;
using nlohmann::json;
using testing::call_ok;
using testing::get_task;
using testing::observe;
using testing::task_metadata;
using testing::TaskEventLog;
using testing::TestHub;

// The error of `op`, which must fail without writing to the log.
engine::Error refusal(TestHub& t, std::string_view op, const json& params) {
  const auto before = t.hub().store().last_sequence();
  auto result = t.ops().call(op, params);
  REQUIRE_FALSE(result.has_value());
  CHECK(t.hub().store().last_sequence() == before);
  return result.error();
}

TEST_CASE("TASK-05 task states: the terminal set and AG2's six values") {
  for (std::string_view state :
       {"completed", "failed", "expired", "cancelled"}) {
    CHECK(engine::is_terminal_task_state(state));
    CHECK(engine::is_task_state(state));
  }
  for (std::string_view state : {"created", "running"}) {
    CHECK_FALSE(engine::is_terminal_task_state(state));
    CHECK(engine::is_task_state(state));
  }
  CHECK_FALSE(engine::is_task_state("paused"));
  CHECK_FALSE(engine::is_task_state("Running"));
}

TEST_CASE("task ids are one path segment of at most 128 characters") {
  CHECK(engine::is_valid_task_id("task-1"));
  CHECK(engine::is_valid_task_id("0f1e2d3c4b5a69788796a5b4c3d2e1f0"));
  CHECK(engine::is_valid_task_id("a.b_c-d"));
  CHECK(engine::is_valid_task_id(std::string(128, 'a')));
  CHECK_FALSE(engine::is_valid_task_id(std::string(129, 'a')));
  CHECK_FALSE(engine::is_valid_task_id(""));
  CHECK_FALSE(engine::is_valid_task_id("-task"));
  CHECK_FALSE(engine::is_valid_task_id("_task"));
  CHECK_FALSE(engine::is_valid_task_id(".."));
  CHECK_FALSE(engine::is_valid_task_id("a/b"));
  CHECK_FALSE(engine::is_valid_task_id("a b"));
  CHECK_FALSE(engine::is_valid_task_id("t\u00e9"));
}

TEST_CASE("get_task returns AG2's TaskMetadata shape") {
  TestHub t;
  const auto bob = t.add_agent("bob");
  observe(t, task_metadata("task-shape", bob, std::nullopt, "analysis"));
  t.restart();
  CHECK(get_task(t, "task-shape") ==
        json{{"task_id", "task-shape"},
             {"owner_id", bob},
             {"spec",
              {{"title", "work task-shape"},
               {"description", ""},
               {"payload", json::object()},
               {"capability", "analysis"}}},
             {"state", "running"},
             {"created_at", testing::kTaskT0},
             {"started_at", testing::kTaskT0},
             {"completed_at", nullptr},
             {"expires_at", "2026-01-01T00:15:00+00:00"},
             {"last_progress_at", nullptr},
             {"progress", json::object()},
             {"result", nullptr},
             {"error", ""},
             {"channel_id", nullptr}});
  const auto missing = refusal(t, "get_task", {{"task_id", "task-none"}});
  CHECK(missing.kind == ErrorKind::kNotFound);
  CHECK(missing.message == "task not found: task-none");
}

TEST_CASE("observe_task of a known id updates it in place") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  json first = task_metadata("task-1", bob);
  first["progress"] = {{"docs", 1}, {"pct", 0.1}};
  observe(t, first);
  call_ok(t, "update_task", {{"task_id", "task-1"}, {"state", "completed"}});
  t.restart();

  json again = task_metadata("task-1", bob, opened->channel_id);
  again["spec"]["title"] = "renamed";
  again["started_at"] = "";
  again["expires_at"] = "2026-01-02T00:00:00+00:00";
  again["progress"] = {{"docs", 2}};
  observe(t, again);  // AG2: even a terminal task goes back to running

  const json task = get_task(t, "task-1");
  CHECK(task["state"] == "running");
  CHECK(task["spec"]["title"] == "work task-1");  // the spec stays
  CHECK(task["started_at"] == testing::kTaskT0);  // empty: unchanged
  CHECK(task["expires_at"] == "2026-01-02T00:00:00+00:00");
  CHECK(task["channel_id"] == opened->channel_id);
  CHECK(task["progress"] == json{{"docs", 2}, {"pct", 0.1}});
  CHECK(call_ok(t, "list_tasks", {{"channel_id", opened->channel_id}}).size() ==
        1);
}

TEST_CASE("observe_task refuses bad input and writes nothing") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto eve = t.add_agent("eve");
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  auto observe_error = [&](const json& metadata) {
    return refusal(t, "observe_task", {{"metadata", metadata}});
  };

  auto error = observe_error(task_metadata("a/b", bob));
  CHECK(error.kind == ErrorKind::kProtocol);
  CHECK(error.message == "invalid task_id: 'a/b'");
  CHECK(observe_error(task_metadata(".hidden", bob)).message ==
        "invalid task_id: '.hidden'");
  CHECK(observe_error(task_metadata(std::string(129, 'a'), bob)).kind ==
        ErrorKind::kProtocol);

  error = observe_error(task_metadata("task-1", "nobody"));
  CHECK(error.kind == ErrorKind::kNotFound);
  CHECK(error.message == "agent not registered: nobody");

  json bad = task_metadata("task-1", bob);
  bad["state"] = "paused";
  CHECK(observe_error(bad).message == "'paused' is not a valid TaskState");
  bad = task_metadata("task-1", bob);
  bad["phase"] = "x";
  CHECK(observe_error(bad).message == "task has unknown key 'phase'");
  bad = task_metadata("task-1", bob);
  bad.erase("spec");
  CHECK(observe_error(bad).message == "task is missing required key 'spec'");
  bad = task_metadata("task-1", bob);
  bad["spec"].erase("title");
  CHECK(observe_error(bad).message ==
        "task.spec is missing required key 'title'");
  bad = task_metadata("task-1", bob);
  bad["progress"] = json::array();
  CHECK(observe_error(bad).message ==
        "task field 'progress' must be an object");

  error = observe_error(task_metadata("task-1", bob, "nochannel"));
  CHECK(error.kind == ErrorKind::kNotFound);
  CHECK(error.message == "channel not found: nochannel");
  error = observe_error(task_metadata("task-1", eve, opened->channel_id));
  CHECK(error.kind == ErrorKind::kAccessDenied);
  CHECK(error.message == "task owner is not a participant of channel '" +
                             opened->channel_id + "'");
  CHECK(call_ok(t, "list_tasks", json::object()) == json::array());
}

TEST_CASE("max_concurrent_tasks counts the owner's live tasks") {
  TestHub t;
  engine::Rule rule;
  rule.limits.max_concurrent_tasks = 1;
  const auto bob = t.add_agent("bob", {}, rule);
  observe(t, task_metadata("task-1", bob));
  t.restart();
  const auto error =
      refusal(t, "observe_task", {{"metadata", task_metadata("task-2", bob)}});
  CHECK(error.kind == ErrorKind::kAccessDenied);
  CHECK(error.message ==
        "owner '" + bob + "' exceeded max_concurrent_tasks (1 >= 1)");
  observe(t, task_metadata("task-1", bob));  // a known id is not new
  call_ok(t, "update_task", {{"task_id", "task-1"}, {"state", "failed"}});
  observe(t, task_metadata("task-2", bob));
  CHECK(get_task(t, "task-2")["state"] == "running");
}

TEST_CASE("max_concurrent_tasks holds under concurrent observe_task calls") {
  TestHub t;
  engine::Rule rule;
  rule.limits.max_concurrent_tasks = 3;
  const auto bob = t.add_agent("bob", {}, rule);
  std::atomic<int> admitted = 0;
  std::atomic<int> refused = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      auto metadata = engine::task_from_json(
          task_metadata("task-" + std::to_string(i), bob));
      auto observed = t.hub().observe_task(std::move(*metadata));
      (observed ? admitted : refused) += 1;
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(admitted == 3);
  CHECK(refused == 5);
  t.restart();
  CHECK(t.hub().list_tasks({.owner_id = bob}).size() == 3);
}

TEST_CASE("update_task merges progress and applies any transition") {
  TestHub t;
  const auto bob = t.add_agent("bob");
  observe(t, task_metadata("task-u", bob));
  t.clock().advance(std::chrono::seconds(1));
  call_ok(t, "update_task",
          {{"task_id", "task-u"}, {"progress", {{"docs", 2}, {"pct", 0.25}}}});
  t.restart();
  t.clock().advance(std::chrono::seconds(1));
  call_ok(t, "update_task",
          {{"task_id", "task-u"},
           {"progress", {{"docs", 4}}},
           {"result", nullptr},
           {"error", ""}});
  json task = get_task(t, "task-u");
  CHECK(task["progress"] == json{{"docs", 4}, {"pct", 0.25}});
  CHECK(task["last_progress_at"] == "2026-01-01T00:00:02+00:00");
  CHECK(task["state"] == "running");
  CHECK(task["result"].is_null());
  CHECK(task["error"] == "");
  CHECK(task["completed_at"].is_null());

  // No transition validation (AG2): running -> created is accepted.
  call_ok(t, "update_task", {{"task_id", "task-u"}, {"state", "created"}});
  CHECK(get_task(t, "task-u")["state"] == "created");

  call_ok(t, "update_task",
          {{"task_id", "task-u"},
           {"state", "failed"},
           {"error", "RuntimeError: model timed out"}});
  task = get_task(t, "task-u");
  CHECK(task["state"] == "failed");
  CHECK(task["error"] == "RuntimeError: model timed out");
  CHECK(task["completed_at"] == "2026-01-01T00:00:02+00:00");

  auto error = refusal(t, "update_task", {{"task_id", "task-none"}});
  CHECK(error.kind == ErrorKind::kNotFound);
  CHECK(error.message == "task not found: task-none");
  error = refusal(t, "update_task", {{"task_id", "task-u"}, {"state", "x"}});
  CHECK(error.message == "'x' is not a valid TaskState");
  error = refusal(t, "update_task", {{"state", "running"}});
  CHECK(error.message == "'task_id'");
  error = refusal(t, "update_task",
                  {{"task_id", "task-u"}, {"progress", json::array()}});
  CHECK(error.message == "param 'progress' must be an object");
}

TEST_CASE("fire_task_event tells the listeners and takes only mirror_failed") {
  TestHub t;
  auto log = std::make_shared<TaskEventLog>();
  testing::listen(t, log);
  const auto bob = t.add_agent("bob");
  observe(t, task_metadata("task-f", bob));
  const auto before = t.hub().store().last_sequence();
  call_ok(t, "fire_task_event",
          {{"task_id", "task-f"},
           {"kind", "mirror_failed"},
           {"payload",
            {{"op", "update_task"},
             {"owner_id", bob},
             {"channel_id", nullptr},
             {"exc_type", "RuntimeError"},
             {"exc_message", std::string(600, 'x')}}}});
  CHECK(t.hub().store().last_sequence() == before);  // nothing logged
  auto events = log->snapshot();
  REQUIRE(events.size() == 1);
  CHECK(events[0].task_id == "task-f");
  CHECK(events[0].kind == "mirror_failed");
  CHECK(events[0].payload["exc_message"] == std::string(500, 'x'));

  auto error = refusal(t, "fire_task_event",
                       {{"task_id", "task-f"},
                        {"kind", "completed"},
                        {"payload", {{"owner_id", bob}}}});
  CHECK(error.kind == ErrorKind::kAccessDenied);
  CHECK(error.message ==
        "only 'mirror_failed' task events are accepted over the wire, got "
        "'completed'");
  error = refusal(t, "fire_task_event",
                  {{"task_id", "task-f"},
                   {"kind", "mirror_failed"},
                   {"payload", {{"owner_id", bob}, {"extra", 1}}}});
  CHECK(error.kind == ErrorKind::kProtocol);
  error = refusal(t, "fire_task_event",
                  {{"task_id", "task-f"},
                   {"kind", "mirror_failed"},
                   {"payload", {{"op", "x"}}}});
  CHECK(error.message ==
        "mirror_failed payload needs the reporting agent's owner_id");
  error = refusal(t, "fire_task_event",
                  {{"task_id", "task-f"},
                   {"kind", "mirror_failed"},
                   {"payload", {{"owner_id", "someone-else"}}}});
  CHECK(error.message ==
        "mirror_failed for task 'task-f' must carry its own owner and channel");
  CHECK(log->snapshot().size() == 1);
}

TEST_CASE("the hub's task API refuses malformed JSON text without writing") {
  TestHub t;
  const auto bob = t.add_agent("bob");
  engine::TaskMetadata task{.task_id = "task-j", .owner_id = bob};
  task.spec.title = "t";
  task.progress = "[1]";
  auto refused = t.hub().observe_task(task);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message ==
        "task field 'progress' must be a JSON object");
  task.progress = "{}";
  task.result = "{not json";
  CHECK(t.hub().observe_task(task).error().message ==
        "task field 'result' must be JSON");
  task.result = "null";
  REQUIRE(t.hub().observe_task(task).has_value());
  CHECK(t.hub()
            .update_task("task-j", {.progress = std::string("3")})
            .error()
            .message == "task field 'progress' must be a JSON object");
  CHECK(t.hub().get_task("task-j")->progress == "{}");
}

TEST_CASE("parley exec drives tasks: observe, advance the clock, sweep") {
  testing::ScratchDir data;
  auto runner = engine::ScriptRunner::start(
      [&]() -> engine::Result<std::shared_ptr<log::LogStore>> {
        auto opened = log::open_rocksdb_log_store(data.path() / "store");
        REQUIRE(opened.has_value());
        return std::shared_ptr<log::LogStore>(std::move(opened->store));
      });
  REQUIRE(runner.has_value());
  auto run = [&](const json& line) {
    auto output = (*runner)->run_line(line.dump());
    REQUIRE(output.has_value());
    return json::parse(*output);
  };
  CHECK(run({{"op", "register"},
             {"params",
              {{"passport", {{"name", "bob"}}}, {"resume", json::object()}}},
             {"as", "bob"}})["ok"] == true);
  json metadata = task_metadata("task-s", "$bob");
  metadata["expires_at"] = "2026-01-01T00:00:30+00:00";
  CHECK(run({{"op", "observe_task"}, {"params", {{"metadata", metadata}}}}) ==
        json{{"ok", true}, {"result", nullptr}});
  CHECK(run({{"op", "restart"}})["ok"] == true);
  run({{"op", "clock.advance"}, {"params", {{"seconds", 29}}}});
  run({{"op", "sweep"}});
  CHECK(run({{"op", "get_task"},
             {"params", {{"task_id", "task-s"}}}})["result"]["state"] ==
        "running");
  run({{"op", "clock.advance"}, {"params", {{"seconds", 1}}}});
  CHECK(run({{"op", "sweep"}})["ok"] == true);
  const json task =
      run({{"op", "get_task"}, {"params", {{"task_id", "task-s"}}}})["result"];
  CHECK(task["state"] == "expired");
  CHECK(task["error"] == "ttl_expired");
  CHECK(task["completed_at"] == "2026-01-01T00:00:30+00:00");
  CHECK(run({{"op", "get_task"}, {"params", {{"task_id", "task-x"}}}}) ==
        json{{"ok", false},
             {"error_code", "not_found"},
             {"error_message", "task not found: task-x"}});
}

}  // namespace
}  // namespace parley
