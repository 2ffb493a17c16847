// Tasks (TASK-* and AUDIT-04) through the op layer, with a restart in the
// middle of each scenario: tasks, their specs, checkpoints and cancel-request
// bookkeeping are folded back from the log.
#include <doctest/doctest.h>

#include <chrono>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/records/task_records.h"
#include "engine/state/hub_state.h"
#include "engine/tasks/task_access.h"
#include "parley/schemas/log_generated.h"
#include "schemas/record_builder.h"
#include "tests/hub_fixture.h"
#include "tests/task_test_support.h"

namespace parley {
namespace {

using engine::ChannelState;
using engine::ErrorKind;
using nlohmann::json;
using testing::audit_of_kind;
using testing::call_ok;
using testing::get_task;
using testing::observe;
using testing::task_metadata;
using testing::TaskEventLog;
using testing::TestHub;
namespace ev = engine::event_type;

// The kinds of every log record, in log order, as short names.
std::vector<std::string> record_kinds(TestHub& t) {
  std::vector<std::string> out;
  auto read = t.hub().store().read(
      1, log::kLastSequence, [&](std::uint64_t, std::string_view record) {
        const auto* root = schema::GetRecord(record.data());
        switch (root->body_type()) {
          case schema::Body::TaskUpdated:
            out.push_back("task:" +
                          engine::flex_to_json(
                              {root->body_as_TaskUpdated()->metadata()->data(),
                               root->body_as_TaskUpdated()->metadata()->size()})
                              .at("state")
                              .get<std::string>());
            break;
          case schema::Body::Envelope:
            out.push_back(root->body_as_Envelope()->event_type()->str());
            break;
          case schema::Body::AuditRecorded:
            out.push_back("audit:" +
                          root->body_as_AuditRecorded()->kind()->str());
            break;
          default:
            out.push_back(schema::EnumNameBody(root->body_type()));
        }
        return true;
      });
  REQUIRE(read.has_value());
  return out;
}

// The position of the last record of `kind`.
std::size_t index_of(const std::vector<std::string>& kinds,
                     std::string_view kind) {
  auto it = std::ranges::find(kinds.rbegin(), kinds.rend(), kind);
  REQUIRE(it != kinds.rend());
  return static_cast<std::size_t>(kinds.rend() - it) - 1;
}

struct Pair {
  TestHub t;
  std::string alice = t.add_agent("alice");
  std::string bob = t.add_agent("bob");
  std::string channel;

  Pair() {
    auto opened = t.open(alice, "conversation", {bob});
    REQUIRE(opened.has_value());
    channel = opened->channel_id;
  }
};

TEST_CASE("TASK-03 closing a channel expires its live tasks first") {
  Pair p;
  auto& t = p.t;
  observe(t, task_metadata("task-live", p.bob, p.channel));
  observe(t, task_metadata("task-done", p.bob, p.channel));
  call_ok(t, "update_task",
          {{"task_id", "task-done"}, {"state", "completed"}, {"result", 1}});
  t.restart();  // the channel's task index is folded back from the log
  t.clock().advance(std::chrono::seconds(5));
  const auto before = t.audit().size();

  call_ok(t, "close_channel", {{"channel_id", p.channel}});

  const json live = get_task(t, "task-live");
  CHECK(live["state"] == "expired");
  CHECK(live["error"] == "channel_closed");
  CHECK(live["completed_at"] == "2026-01-01T00:00:05+00:00");
  const json done = get_task(t, "task-done");
  CHECK(done["state"] == "completed");
  CHECK(done["completed_at"] == "2026-01-01T00:00:00+00:00");

  // The task's expiry and its audit record precede the closed envelope.
  const auto kinds = record_kinds(t);
  const auto expired = index_of(kinds, "task:expired");
  const auto terminated = index_of(kinds, "audit:task_terminated");
  const auto closed = index_of(kinds, std::string(ev::kChannelClosed));
  CHECK(expired < terminated);
  CHECK(terminated < closed);
  const auto audit = t.audit();
  REQUIRE(audit.size() == before + 2);
  CHECK(audit[before]["kind"] == "task_terminated");
  CHECK(audit[before + 1]["kind"] == "channel_closed");

  t.restart();
  CHECK(get_task(t, "task-live")["state"] == "expired");
}

TEST_CASE("TASK-03 an expiring channel expires its tasks with channel_closed") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto opened =
      t.open(alice, "conversation", {bob}, json::object(), std::string("60s"));
  REQUIRE(opened.has_value());
  json metadata = task_metadata("task-1", bob, opened->channel_id);
  metadata["expires_at"] = "2026-01-01T01:00:00+00:00";
  observe(t, metadata);
  t.restart();
  t.clock().advance(std::chrono::seconds(60));
  REQUIRE(t.hub().expire_due().has_value());
  CHECK(t.hub().get_channel(opened->channel_id)->state ==
        ChannelState::kExpired);
  const json task = get_task(t, "task-1");
  CHECK(task["state"] == "expired");
  CHECK(task["error"] == "channel_closed");
  const auto kinds = record_kinds(t);
  CHECK(index_of(kinds, "task:expired") <
        index_of(kinds, std::string(ev::kChannelExpired)));
}

TEST_CASE("TASK-04 standalone task TTL") {
  TestHub t;
  auto log = std::make_shared<TaskEventLog>();
  testing::listen(t, log);
  const auto bob = t.add_agent("bob");
  json metadata = task_metadata("task-ttl", bob, std::nullopt, "analysis");
  metadata["expires_at"] = "2025-12-31T23:59:00+00:00";  // in the past
  observe(t, metadata);
  t.restart();

  REQUIRE(t.hub().expire_due().has_value());
  const json task = get_task(t, "task-ttl");
  CHECK(task["state"] == "expired");
  CHECK(task["error"] == "ttl_expired");
  CHECK(task["completed_at"] == std::string(testing::kTaskT0));
  const auto terminated = audit_of_kind(t, "task_terminated");
  REQUIRE(terminated.size() == 1);
  CHECK(terminated[0] == json{{"at", testing::kTaskT0},
                              {"kind", "task_terminated"},
                              {"task_id", "task-ttl"},
                              {"owner_id", bob},
                              {"channel_id", nullptr},
                              {"outcome", "expired"},
                              {"capability", "analysis"},
                              {"reason", "ttl_expired"}});
  const auto events = log->snapshot();
  REQUIRE(events.size() == 1);
  CHECK(events[0].task_id == "task-ttl");
  CHECK(events[0].kind == "expired");
  CHECK(events[0].payload == json{{"owner_id", bob},
                                  {"channel_id", nullptr},
                                  {"reason", "ttl_expired"},
                                  {"capability", "analysis"},
                                  {"outcome", "expired"},
                                  {"at", testing::kTaskT0}});

  // A second sweep finds nothing to do.
  REQUIRE(t.hub().expire_due().has_value());
  CHECK(audit_of_kind(t, "task_terminated").size() == 1);
}

TEST_CASE("TASK-04 a task expires at exactly expires_at, not one tick before") {
  TestHub t;
  const auto bob = t.add_agent("bob");
  json metadata = task_metadata("task-edge", bob);
  metadata["expires_at"] = "2026-01-01T00:01:00+00:00";
  observe(t, metadata);
  t.restart();

  t.clock().advance(std::chrono::seconds(60) - std::chrono::microseconds(1));
  REQUIRE(t.hub().expire_due().has_value());
  CHECK(get_task(t, "task-edge")["state"] == "running");
  CHECK(audit_of_kind(t, "task_terminated").empty());

  t.clock().advance(std::chrono::microseconds(1));
  REQUIRE(t.hub().expire_due().has_value());
  CHECK(get_task(t, "task-edge")["state"] == "expired");
  CHECK(get_task(t, "task-edge")["completed_at"] ==
        "2026-01-01T00:01:00+00:00");
}

TEST_CASE("task_ttl_default gives a task without expires_at its deadline") {
  TestHub t;
  engine::Rule rule;
  rule.limits.task_ttl_default = std::string("10m");
  const auto bob = t.add_agent("bob", {}, rule);
  const auto carol = t.add_agent("carol");  // AG2's default, 15m
  observe(t, task_metadata("task-bob", bob));
  observe(t, task_metadata("task-carol", carol));
  CHECK(get_task(t, "task-bob")["expires_at"] == "2026-01-01T00:10:00+00:00");
  CHECK(get_task(t, "task-carol")["expires_at"] == "2026-01-01T00:15:00+00:00");
  t.restart();

  t.clock().advance(std::chrono::minutes(10) - std::chrono::microseconds(1));
  REQUIRE(t.hub().expire_due().has_value());
  CHECK(get_task(t, "task-bob")["state"] == "running");
  t.clock().advance(std::chrono::microseconds(1));
  REQUIRE(t.hub().expire_due().has_value());
  CHECK(get_task(t, "task-bob")["state"] == "expired");
  CHECK(get_task(t, "task-bob")["error"] == "ttl_expired");
  CHECK(get_task(t, "task-carol")["state"] == "running");

  // A zero default means no deadline.
  rule.limits.task_ttl_default = std::int64_t{0};
  REQUIRE(t.hub().set_rule(bob, rule).has_value());
  observe(t, task_metadata("task-forever", bob));
  CHECK(get_task(t, "task-forever")["expires_at"].is_null());
}

TEST_CASE("TASK-05 cancellation is terminal and mirrored") {
  TestHub t;
  const auto bob = t.add_agent("bob");
  observe(t, task_metadata("task-c", bob, std::nullopt, "indexing"));
  t.restart();
  t.clock().advance(std::chrono::seconds(3));
  call_ok(
      t, "update_task",
      {{"task_id", "task-c"}, {"state", "cancelled"}, {"error", "wrap-up"}});
  // The mirror's own observation after the update counts nothing twice.
  call_ok(t, "record_observation",
          {{"owner_id", bob},
           {"capability", "indexing"},
           {"outcome", "cancelled"},
           {"task_id", "task-c"}});
  t.restart();

  const json task = get_task(t, "task-c");
  CHECK(task["state"] == "cancelled");
  CHECK(task["error"] == "wrap-up");
  CHECK(task["completed_at"] == "2026-01-01T00:00:03+00:00");
  const json resume = call_ok(t, "get_resume", {{"agent_id", bob}});
  CHECK(resume["observed"]["indexing"]["n"] == 1);
  CHECK(resume["observed"]["indexing"]["completed"] == 0);
  CHECK(resume["observed"]["indexing"]["failed"] == 0);
  CHECK(resume["observed"]["indexing"]["expired"] == 0);
  CHECK(resume["observed"]["indexing"]["p50_latency_ms"] == 3000.0);
  const auto terminated = audit_of_kind(t, "task_terminated");
  REQUIRE(terminated.size() == 1);
  CHECK(terminated[0]["outcome"] == "cancelled");
  CHECK(terminated[0]["reason"] == "wrap-up");
}

TEST_CASE("TASK-06 cancel after completion is a no-op") {
  TestHub t;
  auto log = std::make_shared<TaskEventLog>();
  testing::listen(t, log);
  const auto bob = t.add_agent("bob");
  observe(t, task_metadata("task-6", bob));
  call_ok(t, "update_task",
          {{"task_id", "task-6"}, {"state", "completed"}, {"result", "ok"}});
  t.restart();
  const auto records = record_kinds(t).size();

  call_ok(t, "update_task",
          {{"task_id", "task-6"}, {"state", "cancelled"}, {"error", "late"}});

  const json task = get_task(t, "task-6");
  CHECK(task["state"] == "completed");
  CHECK(task["result"] == "ok");
  CHECK(task["error"] == "");
  CHECK(record_kinds(t).size() == records);  // nothing written
  const auto events = log->snapshot();
  REQUIRE(events.size() == 1);  // the completion only
  CHECK(events[0].kind == "completed");
}

TEST_CASE("TASK-07 checkpoint store") {
  TestHub t;
  const auto bob = t.add_agent("bob");
  const json snapshot = {{"step", 7}, {"buffer", {"a", "b"}}};
  call_ok(t, "checkpoint_task", {{"task_id", "task-42"}, {"state", snapshot}});
  CHECK(call_ok(t, "read_task_checkpoint", {{"task_id", "task-42"}}) ==
        snapshot);
  CHECK(call_ok(t, "read_task_checkpoint", {{"task_id", "task-unknown"}})
            .is_null());

  call_ok(t, "checkpoint_task", {{"task_id", "task-v"}, {"state", {{"v", 1}}}});
  call_ok(t, "checkpoint_task", {{"task_id", "task-v"}, {"state", {{"v", 2}}}});
  CHECK(call_ok(t, "read_task_checkpoint", {{"task_id", "task-v"}}) ==
        json{{"v", 2}});

  // A task resumed from a prior id sees the prior snapshot and completes.
  observe(t, task_metadata("task-prior", bob));
  const json prior = {{"phase", "research"}, {"found", 42}};
  call_ok(t, "checkpoint_task", {{"task_id", "task-prior"}, {"state", prior}});
  call_ok(t, "update_task", {{"task_id", "task-prior"}, {"state", "failed"}});
  t.restart();
  CHECK(call_ok(t, "read_task_checkpoint", {{"task_id", "task-prior"}}) ==
        prior);
  observe(t, task_metadata("task-resumed", bob));
  CHECK(call_ok(t, "read_task_checkpoint", {{"task_id", "task-resumed"}})
            .is_null());  // never checkpointed
  call_ok(t, "update_task",
          {{"task_id", "task-resumed"}, {"state", "completed"}});
  CHECK(get_task(t, "task-resumed")["state"] == "completed");

  // A checkpoint taken after the task is terminal is not stored.
  call_ok(t, "checkpoint_task",
          {{"task_id", "task-prior"}, {"state", {{"phase", "late"}}}});
  CHECK(call_ok(t, "read_task_checkpoint", {{"task_id", "task-prior"}}) ==
        prior);

  t.restart();
  CHECK(call_ok(t, "read_task_checkpoint", {{"task_id", "task-42"}}) ==
        snapshot);
  CHECK(call_ok(t, "read_task_checkpoint", {{"task_id", "task-v"}}) ==
        json{{"v", 2}});

  // Not an object: refused, nothing written.
  auto refused = t.ops().call(
      "checkpoint_task", {{"task_id", "task-v"}, {"state", json::array()}});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "param 'state' must be an object");
}

TEST_CASE("TASK-07 corrupt checkpoint data is an error, not null") {
  // A TaskCheckpointed record whose state is not an object, and a
  // TaskUpdated record whose metadata is not a task: the fold (hydrate
  // included) refuses them, naming the record.
  engine::AdapterRegistry adapters;
  engine::HubState state(adapters);
  auto build = [](schema::Body type, const json& payload) {
    flatbuffers::FlatBufferBuilder builder;
    auto id = builder.CreateString("task-1");
    auto bytes = builder.CreateVector(engine::to_flex(payload).value());
    auto body = type == schema::Body::TaskCheckpointed
                    ? schema::CreateTaskCheckpointed(builder, id, bytes).Union()
                    : schema::CreateTaskUpdated(builder, id, 0, bytes).Union();
    return schema::finish_record(builder, type, body);
  };
  auto checkpoint =
      state.apply(7, build(schema::Body::TaskCheckpointed, json{1, 2}));
  REQUIRE_FALSE(checkpoint.has_value());
  CHECK(checkpoint.error().kind == ErrorKind::kStorage);
  CHECK(checkpoint.error().message ==
        "corruption: log record 7 holds an unreadable task: a checkpoint "
        "that is not an object");
  auto task = state.apply(
      8, build(schema::Body::TaskUpdated, json{{"task_id", "task-1"}}));
  REQUIRE_FALSE(task.has_value());
  CHECK(task.error().message ==
        "corruption: log record 8 holds an unreadable task: task is missing "
        "required key 'owner_id'");
  CHECK_FALSE(state.tasks.checkpoint("task-1").has_value());
  CHECK(state.tasks.size() == 0);
}

TEST_CASE(
    "TASK-08 capability tags drive observed stats, untagged tasks do not") {
  TestHub t;
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  observe(t, task_metadata("task-tagged", bob, std::nullopt, "analysis"));
  observe(t, task_metadata("task-plain", carol));
  t.restart();
  t.clock().advance(std::chrono::milliseconds(1500));
  call_ok(t, "update_task",
          {{"task_id", "task-tagged"},
           {"state", "completed"},
           {"result", {{"answer", 42}}}});
  call_ok(t, "update_task",
          {{"task_id", "task-plain"}, {"state", "completed"}});

  const json observed =
      call_ok(t, "get_resume", {{"agent_id", bob}})["observed"];
  CHECK(observed["analysis"]["n"] == 1);
  CHECK(observed["analysis"]["completed"] == 1);
  CHECK(observed["analysis"]["p50_latency_ms"] == 1500.0);
  CHECK(t.hub().agents_with_capability("analysis") ==
        std::vector<std::string>{bob});
  CHECK(call_ok(t, "get_resume", {{"agent_id", carol}})["observed"] ==
        json::object());
  // The observation is audited like record_observation's.
  const auto observed_audit = audit_of_kind(t, "resume_set");
  REQUIRE(observed_audit.size() == 1);
  CHECK(observed_audit[0]["source"] == "observed");
  CHECK(observed_audit[0]["capability"] == "analysis");
  CHECK(observed_audit[0]["outcome"] == "completed");
}

TEST_CASE("TASK-09 task spec (incl. capability) survives restart") {
  TestHub t;
  engine::Resume resume;
  resume.claimed_capabilities = {"writing"};
  const auto bob = t.add_agent("bob", resume);
  json metadata = task_metadata("task-9", bob, std::nullopt, "analysis");
  metadata["spec"]["description"] = "look closely";
  metadata["spec"]["payload"] = {{"doc", "a.txt"}};
  observe(t, metadata);
  observe(t, task_metadata("task-d", bob, std::nullopt, "discovered"));
  t.clock().advance(std::chrono::milliseconds(42));
  // The hub records the observation at the terminal update (latency from
  // started_at); the mirror's own report of the same task is then a no-op.
  call_ok(t, "update_task", {{"task_id", "task-d"}, {"state", "completed"}});
  call_ok(t, "record_observation",
          {{"owner_id", bob},
           {"capability", "discovered"},
           {"outcome", "completed"},
           {"latency_ms", 42},
           {"task_id", "task-d"}});
  t.restart();

  const json task = get_task(t, "task-9");
  CHECK(task["spec"] == json{{"title", "work task-9"},
                             {"description", "look closely"},
                             {"payload", {{"doc", "a.txt"}}},
                             {"capability", "analysis"}});
  CHECK(task["state"] == "running");
  const json observed =
      call_ok(t, "get_resume", {{"agent_id", bob}})["observed"];
  CHECK(observed["discovered"]["n"] == 1);
  CHECK(observed["discovered"]["completed"] == 1);
  CHECK(observed["discovered"]["p50_latency_ms"] == 42.0);
  CHECK(t.hub().agents_with_capability("discovered") ==
        std::vector<std::string>{bob});
  CHECK(t.hub().agents_with_capability("writing") ==
        std::vector<std::string>{bob});
}

TEST_CASE("TASK-10 cancel requests travel as an envelope to the owner") {
  Pair p;
  auto& t = p.t;
  observe(t, task_metadata("task-bob-123", p.bob, p.channel));
  t.restart();
  const auto wal_size = t.wal(p.channel).size();

  auto id =
      t.hub().request_task_cancel(p.alice, "task-bob-123", "running too long");
  REQUIRE_MESSAGE(id.has_value(), testing::error_message(id));
  const auto wal = t.wal(p.channel);
  REQUIRE(wal.size() == wal_size + 1);
  const auto& request = wal.back();
  CHECK(request.event_type == ev::kTaskCancelRequest);
  CHECK(request.sender_id == p.alice);
  CHECK(request.audience == std::vector<std::string>{p.bob});
  CHECK(request.task_id == "task-bob-123");
  CHECK(engine::flex_to_json(request.event_data) ==
        json{{"task_id", "task-bob-123"}, {"reason", "running too long"}});
  CHECK(t.inbox(p.bob).back().event_type == ev::kTaskCancelRequest);
  // The owner decides; the hub changes nothing.
  CHECK(get_task(t, "task-bob-123")["state"] == "running");

  // A task with no channel cannot carry a request.
  observe(t, task_metadata("task-loose", p.bob));
  auto loose = t.hub().request_task_cancel(p.alice, "task-loose", "stop");
  REQUIRE_FALSE(loose.has_value());
  CHECK(loose.error().kind == ErrorKind::kProtocol);
  CHECK(loose.error().message.find("channel") != std::string::npos);
  auto unknown = t.hub().request_task_cancel(p.alice, "task-nope", "stop");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message == "task not found: task-nope");
}

// The one post a non-participant may make: one cancel request per task,
// shaped exactly as AG2's tasks tool builds it.
TEST_CASE("TASK-10 a non-participant may send one well-formed cancel request") {
  Pair p;
  auto& t = p.t;
  const auto eve = t.add_agent("eve");
  observe(t, task_metadata("task-x", p.bob, p.channel));
  const std::string refusal = "channel '" + p.channel +
                              "' only accepts sends from participants, got '" +
                              eve + "'";
  auto post = [&](json data, std::optional<std::vector<std::string>> audience,
                  std::optional<std::string> task_id) {
    engine::Envelope envelope;
    envelope.channel_id = p.channel;
    envelope.sender_id = eve;
    envelope.audience = std::move(audience);
    envelope.event_type = std::string(ev::kTaskCancelRequest);
    envelope.event_data = engine::to_flex(data).value();
    envelope.task_id = std::move(task_id);
    return t.hub().post_envelope(std::move(envelope));
  };
  const json good = {{"task_id", "task-x"}, {"reason", "please stop"}};
  const std::vector<std::string> owner{p.bob};
  const auto wal_size = t.wal(p.channel).size();

  SUBCASE("malformed requests are refused and write nothing") {
    const std::vector<std::pair<json, std::optional<std::vector<std::string>>>>
        bad = {
            {good, std::nullopt},                             // broadcast
            {good, std::vector<std::string>{p.bob, eve}},     // not [owner]
            {good, std::vector<std::string>{p.alice}},        // not the owner
            {{{"task_id", "task-x"}}, owner},                 // no reason
            {{{"task_id", "task-x"}, {"reason", 3}}, owner},  // not a string
            {{{"task_id", "task-x"}, {"reason", "r"}, {"x", 1}}, owner},
            {{{"task_id", "task-y"}, {"reason", "r"}}, owner},  // mismatch
            {{{"task_id", "task-x"}, {"reason", std::string(501, 'r')}}, owner},
        };
    for (const auto& [data, audience] : bad) {
      auto refused = post(data, audience, "task-x");
      REQUIRE_FALSE(refused.has_value());
      CHECK(refused.error().message == refusal);
    }
    auto no_task = post(good, owner, std::nullopt);
    REQUIRE_FALSE(no_task.has_value());
    CHECK(t.wal(p.channel).size() == wal_size);
  }

  SUBCASE("a reason of exactly 500 characters passes") {
    CHECK(post({{"task_id", "task-x"}, {"reason", std::string(500, 'r')}},
               owner, "task-x")
              .has_value());
  }

  SUBCASE("only one request per task, also across a restart") {
    REQUIRE(post(good, owner, "task-x").has_value());
    CHECK(t.wal(p.channel).size() == wal_size + 1);
    t.restart();
    auto again = post(good, owner, "task-x");
    REQUIRE_FALSE(again.has_value());
    CHECK(again.error().message == refusal);
    // A participant is not limited.
    CHECK(t.hub().request_task_cancel(p.alice, "task-x", "one").has_value());
    CHECK(t.hub().request_task_cancel(p.alice, "task-x", "two").has_value());
  }

  SUBCASE("a task that is terminal, elsewhere or unknown admits nobody") {
    observe(t, task_metadata("task-done", p.bob, p.channel));
    call_ok(t, "update_task",
            {{"task_id", "task-done"}, {"state", "completed"}});
    CHECK_FALSE(
        post({{"task_id", "task-done"}, {"reason", "r"}}, owner, "task-done")
            .has_value());
    observe(t, task_metadata("task-free", p.bob));  // no channel
    CHECK_FALSE(
        post({{"task_id", "task-free"}, {"reason", "r"}}, owner, "task-free")
            .has_value());
    CHECK_FALSE(
        post({{"task_id", "task-zz"}, {"reason", "r"}}, owner, "task-zz")
            .has_value());
    CHECK(t.wal(p.channel).size() == wal_size);
  }

  SUBCASE("not once the channel is closed") {
    observe(t, task_metadata("task-z", p.bob, p.channel));
    REQUIRE(t.hub().close_channel(p.channel).has_value());
    auto closed =
        post({{"task_id", "task-z"}, {"reason", "r"}}, owner, "task-z");
    REQUIRE_FALSE(closed.has_value());
    CHECK(closed.error().kind == ErrorKind::kProtocol);
  }
}

TEST_CASE("TASK-12 task listing") {
  TestHub t;
  CHECK(call_ok(t, "list_tasks", json::object()) == json::array());
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  const auto& channel = opened->channel_id;
  observe(t, task_metadata("task-1", bob, channel));
  observe(t, task_metadata("task-2", alice));
  observe(t, task_metadata("task-3", bob));
  call_ok(t, "update_task", {{"task_id", "task-3"}, {"state", "failed"}});
  t.restart();

  auto ids = [&](const json& params) {
    std::vector<std::string> out;
    for (const json& task : call_ok(t, "list_tasks", params)) {
      out.push_back(task["task_id"]);
    }
    return out;
  };
  using Ids = std::vector<std::string>;
  CHECK(ids(json::object()) == Ids{"task-1", "task-2", "task-3"});
  CHECK(ids({{"agent_id", bob}}) == Ids{"task-1", "task-3"});
  CHECK(ids({{"channel_id", channel}}) == Ids{"task-1"});
  CHECK(ids({{"state", "failed"}}) == Ids{"task-3"});
  CHECK(ids({{"agent_id", bob}, {"state", "running"}}) == Ids{"task-1"});
  CHECK(ids({{"limit", 2}}) == Ids{"task-1", "task-2"});
  CHECK(ids({{"agent_id", "nobody"}}).empty());
}

TEST_CASE("AUDIT-04 task termination records carry capability and outcome") {
  Pair p;
  auto& t = p.t;
  auto log = std::make_shared<TaskEventLog>();
  testing::listen(t, log);
  observe(t, task_metadata("task-cap-1", p.bob, p.channel, "analysis"));
  t.restart();
  const auto before = audit_of_kind(t, "task_terminated").size();
  REQUIRE(t.hub().close_channel(p.channel, "explicit").has_value());
  const auto terminated = audit_of_kind(t, "task_terminated");
  REQUIRE(terminated.size() == before + 1);
  CHECK(terminated.back() == json{{"at", testing::kTaskT0},
                                  {"kind", "task_terminated"},
                                  {"task_id", "task-cap-1"},
                                  {"owner_id", p.bob},
                                  {"channel_id", p.channel},
                                  {"outcome", "expired"},
                                  {"capability", "analysis"},
                                  {"reason", "channel_closed"}});
  const auto events = log->snapshot();
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == "expired");
  CHECK(events[0].payload["reason"] == "channel_closed");
  CHECK(events[0].payload["channel_id"] == p.channel);
  // The owner's track record counts the expiry (README "Tasks").
  const json observed =
      call_ok(t, "get_resume", {{"agent_id", p.bob}})["observed"];
  CHECK(observed["analysis"]["n"] == 1);
  CHECK(observed["analysis"]["expired"] == 1);
}

TEST_CASE("the task access rule: owner of an observed task, else writers") {
  engine::TaskTable tasks;
  engine::TaskMetadata task;
  task.task_id = "task-1";
  task.owner_id = "bob";
  tasks.put(task);
  tasks.claim_checkpoint("job-1", {"alice", "carol"});
  tasks.claim_checkpoint("job-1", {"dave"});  // the first claim stands
  const std::vector<std::string> alice{"alice"}, bob{"bob"}, none;
  auto denial = [&](std::string_view id, const std::vector<std::string>& who) {
    auto result = engine::check_task_access(tasks, id, who);
    return result ? std::string() : result.error().message;
  };
  CHECK(denial("task-1", bob).empty());
  CHECK(denial("task-1", alice) == "connection is not bound to agent 'bob'");
  CHECK(denial("task-1", none) == "connection has no bound agent");
  CHECK(denial("job-1", alice).empty());
  CHECK(denial("job-1", bob) ==
        "connection holds no writer of task 'job-1''s checkpoint");
  CHECK(denial("job-2", bob).empty());  // nobody claimed it
  CHECK(denial("job-2", none) == "connection has no bound agent");
  CHECK(*tasks.checkpoint_writers("job-1") ==
        std::vector<std::string>{"alice", "carol"});
  CHECK(tasks.checkpoint_writers("job-2") == nullptr);
}

TEST_CASE(
    "a connection's first checkpoint of an unobserved task claims it in "
    "the same batch, across a restart") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  std::vector<std::string> writers{alice, bob};
  std::ranges::sort(writers);
  const auto before = t.hub().store().last_sequence();
  REQUIRE(t.hub().checkpoint_task("job-1", R"({"n": 1})", writers).has_value());
  CHECK(t.hub().store().last_sequence() == before + 2);
  const auto kinds = record_kinds(t);
  CHECK(kinds[kinds.size() - 2] == "CheckpointWritersClaimed");
  CHECK(kinds.back() == "TaskCheckpointed");
  t.restart();
  CHECK(t.hub().checkpoint_writers("job-1") == writers);
  // A later connection's write is checked against them, and claims nothing.
  const std::vector<std::string> only_bob{bob};
  REQUIRE(
      t.hub().checkpoint_task("job-1", R"({"n": 2})", only_bob).has_value());
  const std::vector<std::string> carol{t.add_agent("carol")};
  auto refused = t.hub().checkpoint_task("job-1", R"({"n": 3})", carol);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == ErrorKind::kAccessDenied);
  auto read = t.hub().read_task_checkpoint("job-1", carol);
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().kind == ErrorKind::kAccessDenied);
  CHECK(*t.hub().read_task_checkpoint("job-1") == R"({"n":2})");
  CHECK(t.hub().checkpoint_writers("job-1") == writers);
  // Observing the task hands it to its owner: the writers no longer count.
  observe(t, task_metadata("job-1", alice));
  const std::vector<std::string> only_alice{alice};
  CHECK(t.hub().check_task_access("job-1", only_alice).has_value());
  CHECK_FALSE(t.hub().check_task_access("job-1", only_bob).has_value());
}

}  // namespace
}  // namespace parley
