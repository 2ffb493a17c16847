// Wire authorization (RECON-10): a request that carries a Caller is checked
// against the agents bound to its connection before the hub runs it; a
// request without one (in-process) is not checked. The matrix runs every
// op from a connection holding the right agent, the wrong one and none.
#include "engine/ops/authorization.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/json/records_json.h"
#include "engine/ops/caller.h"
#include "engine/ops/control_plane.h"
#include "replay/record_json.h"
#include "tests/hub_fixture.h"
#include "tests/task_test_support.h"
#include "tests/test_support.h"

namespace parley {
namespace {

using engine::ErrorKind;
using nlohmann::json;
using testing::task_metadata;
using testing::TestHub;

// A connection's bindings, as the server would keep them.
class TestCaller final : public engine::Caller {
 public:
  TestCaller(std::initializer_list<std::string> agents = {})
      : agents_(agents) {}

  bool holds(std::string_view agent_id) const override {
    std::lock_guard lock(mutex_);
    return agents_.contains(agent_id);
  }
  std::vector<std::string> bound_agents() const override {
    std::lock_guard lock(mutex_);
    return {agents_.begin(), agents_.end()};
  }
  void bind(std::string agent_id) {
    std::lock_guard lock(mutex_);
    agents_.insert(std::move(agent_id));
  }

 private:
  mutable std::mutex mutex_;
  std::set<std::string, std::less<>> agents_;
};

std::string in_quotes(std::string_view id) {
  return "'" + std::string(id) + "'";
}

std::string not_bound(std::string_view id) {
  return "connection is not bound to agent " + in_quotes(id);
}

std::string no_participant(std::string_view channel) {
  return "connection has no participant in channel " + in_quotes(channel);
}

constexpr std::string_view kNoAgent = "connection has no bound agent";

std::string no_writer(std::string_view task) {
  return "connection holds no writer of task " + in_quotes(task) +
         "'s checkpoint";
}

// Every record kind in the log, in order.
std::vector<json> log_records(TestHub& t) {
  std::vector<json> out;
  auto read = t.hub().store().read(
      1, log::kLastSequence, [&](std::uint64_t sequence, std::string_view r) {
        out.push_back(replay::record_to_json(sequence, r));
        return true;
      });
  REQUIRE(read.has_value());
  return out;
}

std::vector<json> records_of_kind(TestHub& t, std::string_view kind) {
  std::vector<json> out;
  for (json& record : log_records(t)) {
    if (record["kind"] == kind) out.push_back(std::move(record));
  }
  return out;
}

// alice and bob in a conversation (`channel`, one text from alice with
// causation "cause-1"), bob and carol in another (`side`); bob's task
// "task-b" on `channel`, carol's task "task-c" without a channel, bob's
// "task-d" on `channel`. One connection per agent, and one with nothing
// bound.
struct World {
  TestHub t;
  std::string alice = t.add_agent("alice");
  std::string bob = t.add_agent("bob");
  std::string carol = t.add_agent("carol");
  std::string channel;
  std::string side;
  TestCaller alice_conn{alice};
  TestCaller bob_conn{bob};
  TestCaller carol_conn{carol};
  TestCaller nobody;

  World() {
    auto opened = t.open(alice, "conversation", {bob});
    REQUIRE(opened.has_value());
    channel = opened->channel_id;
    auto other = t.open(bob, "conversation", {carol});
    REQUIRE(other.has_value());
    side = other->channel_id;
    json text = text_envelope(alice, "hi");
    text["causation_id"] = "cause-1";
    ok(nullptr, "post_envelope", {{"envelope", text}});
    ok(nullptr, "observe_task",
       {{"metadata", task_metadata("task-b", bob, channel)}});
    ok(nullptr, "observe_task", {{"metadata", task_metadata("task-c", carol)}});
    ok(nullptr, "observe_task",
       {{"metadata", task_metadata("task-d", bob, channel)}});
  }

  json text_envelope(std::string_view sender, std::string_view text) const {
    return {{"channel_id", channel},
            {"sender_id", sender},
            {"audience", nullptr},
            {"event_type", "ag2.msg.text"},
            {"event_data", {{"text", text}}}};
  }

  engine::Result<json> call(const TestCaller* caller, std::string_view op,
                            const json& params) {
    return t.ops().call(op, params, caller);
  }

  json ok(const TestCaller* caller, std::string_view op, const json& params) {
    CAPTURE(op);
    INFO("params: ", params.dump());
    auto result = call(caller, op, params);
    REQUIRE_MESSAGE(result.has_value(), testing::error_message(result));
    return *result;
  }

  // `op` fails with `kind` and `message`, and writes nothing.
  void refused(const TestCaller* caller, std::string_view op,
               const json& params, ErrorKind kind, std::string_view message) {
    CAPTURE(op);
    INFO("params: ", params.dump());
    const auto before = t.hub().store().last_sequence();
    auto result = call(caller, op, params);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().kind == kind);
    CHECK(result.error().message == message);
    CHECK(t.hub().store().last_sequence() == before);
  }

  void denied(const TestCaller* caller, std::string_view op, const json& params,
              std::string_view message) {
    refused(caller, op, params, ErrorKind::kAccessDenied, message);
  }

  json task_ids(const json& tasks) const {
    json ids = json::array();
    for (const json& task : tasks) ids.push_back(task["task_id"]);
    return ids;
  }
  json channel_ids(const json& channels) const {
    json ids = json::array();
    for (const json& metadata : channels) ids.push_back(metadata["channel_id"]);
    return ids;
  }
};

// One op of the matrix: its params, the connection that may make it, and
// what the wrong connection (carol's) and an empty one are told.
struct OpCase {
  std::string op;
  json params;
  const TestCaller* right;
  std::string wrong;
  std::string none;
};

std::vector<OpCase> agent_scoped_cases(World& w) {
  const std::string a = not_bound(w.alice);
  json observed = task_metadata("task-new", w.alice, w.channel);
  return {
      {"set_resume",
       {{"agent_id", w.alice}, {"resume", json::object()}},
       &w.alice_conn,
       a,
       a},
      {"set_skill",
       {{"agent_id", w.alice}, {"skill_md", "# alice"}},
       &w.alice_conn,
       a,
       a},
      {"set_rule",
       {{"agent_id", w.alice}, {"rule", json::object()}},
       &w.alice_conn,
       a,
       a},
      {"unregister", {{"agent_id", w.alice}}, &w.alice_conn, a, a},
      {"create_channel",
       {{"creator_id", w.alice},
        {"manifest_type", "conversation"},
        {"participants", {w.bob}}},
       &w.alice_conn,
       a,
       a},
      {"can_send",
       {{"channel_id", w.channel}, {"sender_id", w.alice}},
       &w.alice_conn,
       a,
       a},
      {"pending_turns_for", {{"agent_id", w.alice}}, &w.alice_conn, a, a},
      {"report_turn_failure",
       {{"channel_id", w.channel},
        {"agent_id", w.alice},
        {"envelope_id", "e1"},
        {"error", "boom"}},
       &w.alice_conn,
       a,
       a},
      {"record_observation",
       {{"owner_id", w.alice},
        {"capability", "analysis"},
        {"outcome", "completed"}},
       &w.alice_conn,
       a,
       a},
      {"post_envelope",
       {{"envelope", w.text_envelope(w.alice, "again")}},
       &w.alice_conn,
       a,
       a},
      {"observe_task", {{"metadata", observed}}, &w.alice_conn, a, a},
      {"list_channels", {{"agent_id", w.alice}}, &w.alice_conn, a, a},
  };
}

std::vector<OpCase> channel_scoped_cases(World& w) {
  const std::string c = no_participant(w.channel);
  return {
      {"get_channel", {{"channel_id", w.channel}}, &w.bob_conn, c, c},
      {"close_channel",
       {{"channel_id", w.channel}, {"reason", "done"}},
       &w.bob_conn,
       c,
       c},
      {"read_wal", {{"channel_id", w.channel}}, &w.bob_conn, c, c},
      {"read_channel_log", {{"channel_id", w.channel}}, &w.bob_conn, c, c},
      {"find_envelope_by_causation",
       {{"channel_id", w.channel},
        {"sender_id", w.alice},
        {"causation_id", "cause-1"}},
       &w.bob_conn,
       c,
       c},
  };
}

std::vector<OpCase> task_scoped_cases(World& w) {
  const std::string b = not_bound(w.bob);
  const std::string none(kNoAgent);
  return {
      {"update_task",
       {{"task_id", "task-b"}, {"progress", {{"pct", 0.5}}}},
       &w.bob_conn,
       b,
       none},
      {"checkpoint_task",
       {{"task_id", "task-b"}, {"state", {{"step", 1}}}},
       &w.bob_conn,
       b,
       none},
      {"read_task_checkpoint", {{"task_id", "task-b"}}, &w.bob_conn, b, none},
      {"fire_task_event",
       {{"task_id", "task-b"},
        {"kind", "mirror_failed"},
        {"payload",
         {{"op", "update"},
          {"owner_id", w.bob},
          {"channel_id", w.channel},
          {"exc_type", "RuntimeError"},
          {"exc_message", "boom"}}}},
       &w.bob_conn,
       b,
       none},
  };
}

// Runs each case of `cases_of` on a fresh world: the wrong connection and
// the empty one are refused with their messages and write nothing; the
// right connection's request goes through.
void run_matrix(std::vector<OpCase> (*cases_of)(World&)) {
  for (std::size_t i = 0;; ++i) {
    World w;
    const std::vector<OpCase> cases = cases_of(w);
    if (i >= cases.size()) break;
    const OpCase& c = cases[i];
    CAPTURE(c.op);
    w.denied(&w.carol_conn, c.op, c.params, c.wrong);
    w.denied(&w.nobody, c.op, c.params, c.none);
    w.ok(c.right, c.op, c.params);
  }
}

TEST_CASE("RECON-10 every op of the control plane is classified for the wire") {
  const auto names = engine::ControlPlane::op_names();
  CHECK(names.size() == 35);
  for (const std::string& op : names) {
    CAPTURE(op);
    CHECK(engine::wire_scope(op).has_value());
  }
  CHECK_FALSE(engine::wire_scope("x").has_value());
  CHECK(engine::wire_scope("register") == engine::WireScope::kUnscoped);
  CHECK(engine::wire_scope("read_channel_log") == engine::WireScope::kChannel);
  CHECK(engine::wire_scope("read_audit") == engine::WireScope::kOperator);
}

TEST_CASE("RECON-10 an unknown op over the wire is a protocol_error") {
  World w;
  w.refused(&w.alice_conn, "x", json::object(), ErrorKind::kProtocol,
            "unknown control-plane op: 'x'");
  w.refused(&w.nobody, "Register", json::object(), ErrorKind::kProtocol,
            "unknown control-plane op: 'Register'");
}

TEST_CASE("RECON-10 unscoped ops answer a connection with no bound agent") {
  World w;
  for (const TestCaller* caller : {&w.nobody, &w.carol_conn}) {
    w.ok(caller, "get_agent", {{"name_or_id", "alice"}});
    w.ok(caller, "get_resume", {{"agent_id", w.alice}});
    w.ok(caller, "get_skill", {{"agent_id", w.alice}});
    w.ok(caller, "get_rule", {{"agent_id", w.alice}});
    CHECK(w.ok(caller, "find_agent_id", {{"name", "bob"}}) == w.bob);
    w.ok(caller, "names_for", {{"agent_ids", {w.alice, w.bob}}});
    CHECK(w.ok(caller, "list_agents", json::object()).size() == 3);
  }
  const json dave =
      w.ok(&w.nobody, "register",
           {{"passport", {{"name", "dave"}}}, {"resume", json::object()}});
  CHECK(dave["name"] == "dave");
}

TEST_CASE(
    "RECON-10 a request may act only for agents bound to its connection") {
  run_matrix(agent_scoped_cases);
}

TEST_CASE("RECON-10 channel-scoped ops need a bound participant") {
  run_matrix(channel_scoped_cases);
  World w;
  w.ok(&w.alice_conn, "read_wal", {{"channel_id", w.channel}});
  w.refused(&w.alice_conn, "get_channel", {{"channel_id", "nope"}},
            ErrorKind::kNotFound, "channel not found: nope");
  w.refused(&w.alice_conn, "read_wal", {{"channel_id", "nope"}},
            ErrorKind::kNotFound, "channel not found: nope");
  // A connection holding several agents acts through any of them.
  TestCaller both{w.alice, w.carol};
  w.ok(&both, "get_channel", {{"channel_id", w.side}});
}

TEST_CASE("RECON-10 task-scoped ops need the observed task's owner bound") {
  run_matrix(task_scoped_cases);
}

TEST_CASE("RECON-10 Parley's operator ops are refused over the wire") {
  World w;
  const json append = {{"record", {{"at", "now"}, {"kind", "note"}}}};
  for (const TestCaller* caller : {&w.alice_conn, &w.nobody}) {
    w.denied(caller, "health", json::object(),
             "'health' is the hub operator's op, not accepted over the wire");
    w.denied(caller, "read_audit", json::object(),
             "'read_audit' is the hub operator's op, not accepted over the "
             "wire");
    w.denied(caller, "append_audit", append,
             "'append_audit' is the hub operator's op, not accepted over the "
             "wire");
    w.denied(caller, "tick_expectations", json::object(),
             "'tick_expectations' is the hub operator's op, not accepted over "
             "the wire");
  }
  // In-process they run as before.
  w.ok(nullptr, "health", json::object());
  w.ok(nullptr, "read_audit", json::object());
  w.ok(nullptr, "append_audit", append);
  w.ok(nullptr, "tick_expectations", json::object());
}

TEST_CASE("RECON-10 in-process callers are not checked") {
  World w;
  w.ok(nullptr, "set_resume",
       {{"agent_id", w.alice}, {"resume", json::object()}});
  w.ok(nullptr, "read_wal", {{"channel_id", w.side}});
  w.ok(nullptr, "get_task", {{"task_id", "task-c"}});
  CHECK(w.ok(nullptr, "list_tasks", json::object()).size() == 3);
  CHECK(w.ok(nullptr, "list_channels", json::object()).size() == 2);
  w.ok(nullptr, "checkpoint_task",
       {{"task_id", "task-c"}, {"state", {{"step", 1}}}});
  w.ok(nullptr, "post_envelope",
       {{"envelope", w.text_envelope(w.alice, "in-process")}});
  CHECK(records_of_kind(w.t, "CheckpointWritersClaimed").empty());
}

TEST_CASE("RECON-10 report_turn_failure needs the agent in the channel") {
  World w;
  w.denied(
      &w.alice_conn, "report_turn_failure",
      {{"channel_id", w.side}, {"agent_id", w.alice}, {"envelope_id", "e1"}},
      "agent is not a participant of channel " + in_quotes(w.side));
  w.refused(
      &w.alice_conn, "report_turn_failure",
      {{"channel_id", "nope"}, {"agent_id", w.alice}, {"envelope_id", "e"}},
      ErrorKind::kNotFound, "channel not found: nope");
  w.ok(&w.bob_conn, "report_turn_failure",
       {{"channel_id", w.side}, {"agent_id", w.bob}, {"envelope_id", "e1"}});
}

TEST_CASE("RECON-10 record_observation of an observed task needs its owner") {
  World w;
  const json params = {{"owner_id", w.alice},
                       {"capability", "analysis"},
                       {"outcome", "completed"},
                       {"task_id", "task-b"}};
  w.denied(&w.alice_conn, "record_observation", params, not_bound(w.bob));
  w.refused(&w.alice_conn, "record_observation",
            {{"owner_id", w.alice},
             {"capability", "analysis"},
             {"outcome", "completed"},
             {"task_id", "../x"}},
            ErrorKind::kProtocol, "invalid task_id: '../x'");
  // An id the hub never observed is the reporter's own business.
  w.ok(&w.alice_conn, "record_observation",
       {{"owner_id", w.alice},
        {"capability", "analysis"},
        {"outcome", "completed"},
        {"task_id", "task-elsewhere"}});
  w.ok(&w.bob_conn, "record_observation",
       {{"owner_id", w.bob},
        {"capability", "analysis"},
        {"outcome", "completed"},
        {"task_id", "task-b"}});
}

TEST_CASE("RECON-10 list_channels lists only the connection's channels") {
  World w;
  auto ids = [&](const TestCaller* caller, const json& params) {
    return w.channel_ids(w.ok(caller, "list_channels", params));
  };
  CHECK(ids(&w.alice_conn, json::object()) == json{w.channel});
  CHECK(ids(&w.carol_conn, json::object()) == json{w.side});
  CHECK(ids(&w.bob_conn, json::object()) == json{w.channel, w.side});
  TestCaller both{w.alice, w.carol};
  CHECK(ids(&both, json::object()) == json{w.channel, w.side});
  CHECK(ids(&both, {{"limit", 1}}) == json{w.channel});
  CHECK(ids(&w.nobody, json::object()) == json::array());
  // The limit applies after the filter.
  CHECK(ids(&w.carol_conn, {{"limit", 1}}) == json{w.side});
  CHECK(ids(nullptr, {{"limit", 1}}) == json{w.channel});
  // Naming an agent needs it bound.
  CHECK(ids(&w.carol_conn, {{"agent_id", w.carol}}) == json{w.side});
  w.denied(&w.carol_conn, "list_channels", {{"agent_id", w.bob}},
           not_bound(w.bob));
}

TEST_CASE("RECON-10 get_task hides a task the connection may not see") {
  World w;
  // The owner, and a participant of the task's channel, see it.
  CHECK(w.ok(&w.bob_conn, "get_task", {{"task_id", "task-b"}})["owner_id"] ==
        w.bob);
  CHECK(w.ok(&w.alice_conn, "get_task", {{"task_id", "task-b"}})["owner_id"] ==
        w.bob);
  // Anyone else gets the answer an unknown id gets.
  w.refused(&w.carol_conn, "get_task", {{"task_id", "task-b"}},
            ErrorKind::kNotFound, "task not found: task-b");
  w.refused(&w.nobody, "get_task", {{"task_id", "task-b"}},
            ErrorKind::kNotFound, "task not found: task-b");
  // A task without a channel: its owner only.
  w.ok(&w.carol_conn, "get_task", {{"task_id", "task-c"}});
  w.refused(&w.bob_conn, "get_task", {{"task_id", "task-c"}},
            ErrorKind::kNotFound, "task not found: task-c");
  w.refused(&w.bob_conn, "get_task", {{"task_id", "a/b"}}, ErrorKind::kProtocol,
            "invalid task_id: 'a/b'");
}

TEST_CASE("RECON-10 list_tasks filters to visible tasks before its limit") {
  World w;
  auto ids = [&](const TestCaller* caller, const json& params) {
    return w.task_ids(w.ok(caller, "list_tasks", params));
  };
  CHECK(ids(&w.bob_conn, json::object()) == json{"task-b", "task-d"});
  CHECK(ids(&w.alice_conn, json::object()) == json{"task-b", "task-d"});
  CHECK(ids(&w.carol_conn, json::object()) == json{"task-c"});
  CHECK(ids(&w.nobody, json::object()) == json::array());
  CHECK(ids(&w.carol_conn, {{"limit", 1}}) == json{"task-c"});
  CHECK(ids(&w.alice_conn, {{"limit", 1}}) == json{"task-b"});
  CHECK(ids(&w.alice_conn, {{"agent_id", w.carol}}) == json::array());
  CHECK(ids(&w.alice_conn, {{"channel_id", w.channel}}) ==
        json{"task-b", "task-d"});
  CHECK(ids(nullptr, {{"limit", 1}}) == json{"task-b"});
}

TEST_CASE(
    "RECON-10 the first wire write of an unobserved task's checkpoint "
    "claims it") {
  World w;
  TestCaller both{w.bob, w.alice};
  w.ok(&both, "checkpoint_task", {{"task_id", "job-1"}, {"state", {{"n", 1}}}});
  std::vector<std::string> sorted{w.alice, w.bob};
  std::ranges::sort(sorted);
  CHECK(w.t.hub().checkpoint_writers("job-1") == sorted);
  // Any writer may read and write it; nobody else.
  CHECK(w.ok(&w.alice_conn, "read_task_checkpoint", {{"task_id", "job-1"}}) ==
        json{{"n", 1}});
  w.ok(&w.bob_conn, "checkpoint_task",
       {{"task_id", "job-1"}, {"state", {{"n", 2}}}});
  w.denied(&w.carol_conn, "read_task_checkpoint", {{"task_id", "job-1"}},
           no_writer("job-1"));
  w.denied(&w.carol_conn, "checkpoint_task",
           {{"task_id", "job-1"}, {"state", {{"n", 3}}}}, no_writer("job-1"));
  w.denied(&w.nobody, "read_task_checkpoint", {{"task_id", "job-1"}}, kNoAgent);
  // So are the other task ops on that id.
  w.denied(&w.carol_conn, "update_task",
           {{"task_id", "job-1"}, {"state", "running"}}, no_writer("job-1"));
  w.refused(&w.alice_conn, "update_task",
            {{"task_id", "job-1"}, {"state", "running"}}, ErrorKind::kNotFound,
            "task not found: job-1");
  // The claim is one log record, written with the first checkpoint.
  const auto claims = records_of_kind(w.t, "CheckpointWritersClaimed");
  REQUIRE(claims.size() == 1);
  CHECK(claims[0]["task_id"] == "job-1");
  CHECK(claims[0]["writers"] == json(sorted));
  // In-process reads are not checked.
  CHECK(w.ok(nullptr, "read_task_checkpoint", {{"task_id", "job-1"}}) ==
        json{{"n", 2}});
  // An id nobody claimed reads as null to any connection with an agent.
  CHECK(w.ok(&w.carol_conn, "read_task_checkpoint", {{"task_id", "job-2"}})
            .is_null());
  w.denied(&w.nobody, "read_task_checkpoint", {{"task_id", "job-2"}}, kNoAgent);
}

TEST_CASE("RECON-10 checkpoint writers survive a restart") {
  World w;
  w.ok(&w.carol_conn, "checkpoint_task",
       {{"task_id", "job-1"}, {"state", {{"n", 1}}}});
  w.t.restart();
  CHECK(w.t.hub().checkpoint_writers("job-1") ==
        std::vector<std::string>{w.carol});
  w.denied(&w.alice_conn, "read_task_checkpoint", {{"task_id", "job-1"}},
           no_writer("job-1"));
  w.denied(&w.alice_conn, "checkpoint_task",
           {{"task_id", "job-1"}, {"state", {{"n", 9}}}}, no_writer("job-1"));
  CHECK(w.ok(&w.carol_conn, "read_task_checkpoint", {{"task_id", "job-1"}}) ==
        json{{"n", 1}});
  w.ok(&w.carol_conn, "checkpoint_task",
       {{"task_id", "job-1"}, {"state", {{"n", 2}}}});
  w.t.restart();
  CHECK(w.ok(&w.carol_conn, "read_task_checkpoint", {{"task_id", "job-1"}}) ==
        json{{"n", 2}});
  CHECK(records_of_kind(w.t, "CheckpointWritersClaimed").size() == 1);
}

TEST_CASE(
    "RECON-10 a checkpoint written in-process has no writer until its "
    "first wire write") {
  World w;
  REQUIRE(w.t.hub().checkpoint_task("job-1", R"({"n": 1})").has_value());
  CHECK_FALSE(w.t.hub().checkpoint_writers("job-1").has_value());
  CHECK(w.ok(&w.alice_conn, "read_task_checkpoint", {{"task_id", "job-1"}}) ==
        json{{"n", 1}});
  w.ok(&w.carol_conn, "checkpoint_task",
       {{"task_id", "job-1"}, {"state", {{"n", 2}}}});
  CHECK(w.t.hub().checkpoint_writers("job-1") ==
        std::vector<std::string>{w.carol});
  w.denied(&w.alice_conn, "read_task_checkpoint", {{"task_id", "job-1"}},
           no_writer("job-1"));
  // In-process writes are still unchecked and claim nothing.
  REQUIRE(w.t.hub().checkpoint_task("job-1", R"({"n": 3})").has_value());
  CHECK(records_of_kind(w.t, "CheckpointWritersClaimed").size() == 1);
}

TEST_CASE("RECON-10 an observed task's checkpoint belongs to its owner") {
  World w;
  w.ok(&w.bob_conn, "checkpoint_task",
       {{"task_id", "task-b"}, {"state", {{"n", 1}}}});
  CHECK_FALSE(w.t.hub().checkpoint_writers("task-b").has_value());
  // A participant of the task's channel sees the task, not its checkpoint.
  w.denied(&w.alice_conn, "read_task_checkpoint", {{"task_id", "task-b"}},
           not_bound(w.bob));
  CHECK(w.ok(&w.bob_conn, "read_task_checkpoint", {{"task_id", "task-b"}}) ==
        json{{"n", 1}});
}

TEST_CASE("RECON-10 two racing first writers cannot both claim a checkpoint") {
  World w;
  for (int round = 0; round < 20; ++round) {
    const std::string task = "race-" + std::to_string(round);
    std::atomic<int> granted = 0;
    std::atomic<int> refused = 0;
    auto write = [&](const TestCaller* caller) {
      auto result = w.call(caller, "checkpoint_task",
                           {{"task_id", task}, {"state", {{"round", round}}}});
      if (result) {
        ++granted;
      } else if (result.error().message == no_writer(task)) {
        ++refused;
      }
    };
    std::thread first(write, &w.alice_conn);
    std::thread second(write, &w.carol_conn);
    first.join();
    second.join();
    CHECK(granted == 1);
    CHECK(refused == 1);
    auto writers = w.t.hub().checkpoint_writers(task);
    REQUIRE(writers.has_value());
    CHECK(writers->size() == 1);
  }
  CHECK(records_of_kind(w.t, "CheckpointWritersClaimed").size() == 20);
}

TEST_CASE("RECON-10 observe_task acts only for its owner and its writers") {
  World w;
  // The metadata's owner must be bound.
  w.denied(&w.alice_conn, "observe_task",
           {{"metadata", task_metadata("task-x", w.bob, w.channel)}},
           not_bound(w.bob));
  // A known id stays its owner's, whatever owner the metadata names.
  w.denied(&w.alice_conn, "observe_task",
           {{"metadata", task_metadata("task-b", w.alice, w.channel)}},
           not_bound(w.bob));
  // An unobserved id whose checkpoint was claimed: its writers only.
  w.ok(&w.carol_conn, "checkpoint_task",
       {{"task_id", "job-1"}, {"state", {{"n", 1}}}});
  w.denied(&w.alice_conn, "observe_task",
           {{"metadata", task_metadata("job-1", w.alice)}}, no_writer("job-1"));
  w.ok(&w.carol_conn, "observe_task",
       {{"metadata", task_metadata("job-1", w.carol)}});
  // The hub's own rule: the owner takes part in the task's channel.
  w.denied(&w.alice_conn, "observe_task",
           {{"metadata", task_metadata("task-y", w.alice, w.side)}},
           "task owner is not a participant of channel " + in_quotes(w.side));
  w.refused(&w.alice_conn, "observe_task",
            {{"metadata", task_metadata("a b", w.alice)}}, ErrorKind::kProtocol,
            "invalid task_id: 'a b'");
}

TEST_CASE(
    "RECON-10 fire_task_event over the wire reports only its own "
    "owner's failure") {
  World w;
  const auto payload = [&](std::string_view owner, const json& channel) {
    return json{{"op", "observe"},
                {"owner_id", owner},
                {"channel_id", channel},
                {"exc_type", "RuntimeError"},
                {"exc_message", "boom"}};
  };
  auto fire = [&](std::string_view task, const json& body) {
    return json{
        {"task_id", task}, {"kind", "mirror_failed"}, {"payload", body}};
  };
  // The payload's owner must be bound, even on the owner's connection.
  TestCaller bob_and_alice{w.bob, w.alice};
  w.denied(&w.bob_conn, "fire_task_event",
           fire("task-b", payload(w.alice, w.channel)), not_bound(w.alice));
  w.denied(&bob_and_alice, "fire_task_event",
           fire("task-b", payload(w.alice, w.channel)),
           "mirror_failed for task 'task-b' must carry its own owner and "
           "channel");
  w.denied(&w.bob_conn, "fire_task_event",
           fire("task-b", payload(w.bob, w.side)),
           "mirror_failed for task 'task-b' must carry its own owner and "
           "channel");
  // An unobserved task: a channel the owner takes part in, if any.
  w.ok(&w.alice_conn, "fire_task_event",
       fire("job-1", payload(w.alice, w.channel)));
  w.ok(&w.alice_conn, "fire_task_event",
       fire("job-1", payload(w.alice, nullptr)));
  w.denied(&w.alice_conn, "fire_task_event",
           fire("job-1", payload(w.alice, w.side)),
           "task owner is not a participant of channel " + in_quotes(w.side));
  // ... and the checkpoint's writers, once claimed.
  w.ok(&w.carol_conn, "checkpoint_task",
       {{"task_id", "job-2"}, {"state", {{"n", 1}}}});
  w.denied(&w.alice_conn, "fire_task_event",
           fire("job-2", payload(w.alice, nullptr)), no_writer("job-2"));
  w.denied(&w.nobody, "fire_task_event",
           fire("job-1", payload(w.alice, nullptr)), kNoAgent);
}

TEST_CASE(
    "RECON-10 over the wire ag2.channel events other than invite.ack "
    "and invite.reject are hub-only") {
  World w;
  for (std::string_view type :
       {"ag2.channel.invite", "ag2.channel.opened", "ag2.channel.closed",
        "ag2.channel.expired", "ag2.channel.renamed"}) {
    json envelope = w.text_envelope(w.alice, "forged");
    envelope["event_type"] = type;
    envelope["event_data"] = {{"channel_id", w.channel}};
    w.refused(&w.alice_conn, "post_envelope", {{"envelope", envelope}},
              ErrorKind::kProtocol,
              "'" + std::string(type) + "' is emitted only by the hub");
  }
  // An invitee's answers pass the wire check (the hub's own rules apply).
  for (std::string_view type :
       {"ag2.channel.invite.ack", "ag2.channel.invite.reject"}) {
    json envelope = w.text_envelope(w.bob, "");
    envelope["event_type"] = type;
    envelope["event_data"] = json::object();
    auto result =
        w.call(&w.bob_conn, "post_envelope", {{"envelope", envelope}});
    if (!result)
      CHECK(result.error().message.find("only by the hub") ==
            std::string::npos);
  }
  // In-process a participant's closed is logged and changes nothing.
  json closed = w.text_envelope(w.alice, "");
  closed["event_type"] = "ag2.channel.closed";
  closed["event_data"] = {{"reason", "forged"}};
  w.ok(nullptr, "post_envelope", {{"envelope", closed}});
  CHECK(w.ok(nullptr, "get_channel", {{"channel_id", w.channel}})["state"] ==
        "active");
}

TEST_CASE("RECON-10 a wire envelope's audience lists only participants") {
  World w;
  auto with_audience = [&](const json& audience) {
    json envelope = w.text_envelope(w.alice, "to you");
    envelope["audience"] = audience;
    return json{{"envelope", envelope}};
  };
  w.ok(&w.alice_conn, "post_envelope", with_audience({w.bob}));
  w.ok(&w.alice_conn, "post_envelope", with_audience({w.alice, w.bob}));
  w.refused(&w.alice_conn, "post_envelope", with_audience({w.carol}),
            ErrorKind::kProtocol,
            "audience must list only participants of the channel");
  w.refused(&w.alice_conn, "post_envelope", with_audience({w.bob, "ghost"}),
            ErrorKind::kProtocol,
            "audience must list only participants of the channel");
  // In-process the audience is not restricted.
  w.ok(nullptr, "post_envelope", with_audience({w.bob, w.carol}));
}

TEST_CASE("a parsed post is authorized as its JSON is") {
  // The server's hot path (ControlPlane::post_envelope) checks a parsed
  // envelope with authorize_post; it must decide every post as authorize()
  // decides its JSON.
  World w;
  std::vector<json> envelopes;
  for (const std::string& sender : {w.alice, w.bob, w.carol}) {
    envelopes.push_back(w.text_envelope(sender, "hi"));
  }
  for (std::string_view task : {"../etc", "task-b", "t1"}) {
    json envelope = w.text_envelope(w.alice, "task talk");
    envelope["task_id"] = task;
    envelopes.push_back(envelope);
  }
  for (std::string_view type :
       {"ag2.channel.closed", "ag2.channel.invite", "ag2.channel.invite.ack",
        "ag2.channel.invite.reject", "ag2.task.progress", "myapp.custom"}) {
    json envelope = w.text_envelope(w.bob, "");
    envelope["event_type"] = type;
    envelopes.push_back(envelope);
  }
  for (const json& audience :
       {json::array({w.bob}), json::array({w.alice, w.bob}),
        json::array({w.carol}), json::array({w.bob, "ghost"}), json::array()}) {
    json envelope = w.text_envelope(w.alice, "to you");
    envelope["audience"] = audience;
    envelopes.push_back(envelope);
    envelope["channel_id"] = "no-such-channel";
    envelopes.push_back(envelope);
  }
  int refusals = 0;
  for (const TestCaller* caller :
       {&w.alice_conn, &w.bob_conn, &w.carol_conn, &w.nobody}) {
    const engine::WireOptions options;
    engine::WireRequest wire{.agents = caller->bound_agents(),
                             .options = options};
    std::ranges::sort(wire.agents);
    for (const json& envelope : envelopes) {
      INFO("envelope: ", envelope.dump());
      auto parsed = engine::envelope_from_json(envelope);
      REQUIRE(parsed.has_value());
      const auto by_json = engine::authorize(w.t.hub(), wire, "post_envelope",
                                             {{"envelope", envelope}});
      const auto typed = engine::authorize_post(w.t.hub(), *caller, *parsed);
      REQUIRE(by_json.has_value() == typed.has_value());
      if (!by_json) {
        ++refusals;
        CHECK(typed.error().kind == by_json.error().kind);
        CHECK(typed.error().message == by_json.error().message);
      }
    }
  }
  CHECK(refusals > 20);
}

TEST_CASE("RECON-10 task ids named on the wire are one path segment") {
  World w;
  json envelope = w.text_envelope(w.alice, "task talk");
  envelope["task_id"] = "../etc";
  w.refused(&w.alice_conn, "post_envelope", {{"envelope", envelope}},
            ErrorKind::kProtocol, "invalid task_id: '../etc'");
  for (std::string_view op :
       {"update_task", "checkpoint_task", "read_task_checkpoint", "get_task",
        "fire_task_event"}) {
    w.refused(&w.alice_conn, op, {{"task_id", "a/b"}}, ErrorKind::kProtocol,
              "invalid task_id: 'a/b'");
  }
  // In-process an envelope's task id is carried as given, as before.
  w.ok(nullptr, "post_envelope", {{"envelope", envelope}});
}

const json kRemotePassport = {
    {"name", "relay"},
    {"kind", "remote_agent"},
    {"auth", {{"scheme", "relay-proxy"}, {"claim", {{"route", "eu-1"}}}}}};

TEST_CASE(
    "RECON-10 remote_agent registration over the wire is off by "
    "default") {
  World w;
  w.denied(&w.alice_conn, "register",
           {{"passport", kRemotePassport}, {"resume", json::object()}},
           "this hub does not accept remote_agent registration over the wire");
  // In-process registration is unchanged, and records no owners.
  const json relay =
      w.ok(nullptr, "register",
           {{"passport", kRemotePassport}, {"resume", json::object()}});
  CHECK(relay["auth"]["claim"] == json{{"route", "eu-1"}});
  CHECK(w.t.hub().agent_owners(relay["agent_id"].get<std::string>()).empty());
}

TEST_CASE(
    "RECON-10 a remote_agent registered over the wire is owned by the "
    "connection's agents") {
  World w;
  engine::ControlPlane ops(w.t.hub(),
                           {.allow_remote_agent_registration = true});
  const json params = {{"passport", kRemotePassport},
                       {"resume", json::object()}};
  auto refused = ops.call("register", params, &w.nobody);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == ErrorKind::kAccessDenied);
  CHECK(refused.error().message ==
        "registering a remote_agent needs a connection holding an agent of "
        "this hub");
  auto relay = ops.call("register", params, &w.alice_conn);
  REQUIRE(relay.has_value());
  // The wire never shows a claim; the hub keeps it in-process.
  CHECK((*relay)["auth"]["claim"] == json::object());
  const std::string relay_id = (*relay)["agent_id"];
  CHECK(
      w.ok(nullptr, "get_agent", {{"name_or_id", "relay"}})["auth"]["claim"] ==
      json{{"route", "eu-1"}});
  CHECK(w.ok(&w.alice_conn, "get_agent",
             {{"name_or_id", "relay"}})["auth"]["claim"] == json::object());
  for (const json& passport : w.ok(&w.nobody, "list_agents", json::object())) {
    CHECK(passport["auth"]["claim"] == json::object());
  }
  // Another remote_agent on a connection holding alice and the relay is
  // owned by alice only.
  TestCaller alice_and_relay{w.alice, relay_id};
  json second = kRemotePassport;
  second["name"] = "relay-2";
  auto relay2 =
      ops.call("register", {{"passport", second}, {"resume", json::object()}},
               &alice_and_relay);
  REQUIRE(relay2.has_value());
  const std::string relay2_id = (*relay2)["agent_id"];
  // The owners are a log record, so they survive a restart.
  w.t.restart();
  CHECK(w.t.hub().agent_owners(relay_id) == std::vector<std::string>{w.alice});
  CHECK(w.t.hub().agent_owners(relay2_id) == std::vector<std::string>{w.alice});
  bool logged = false;
  for (const json& record : records_of_kind(w.t, "AgentRegistered")) {
    if (record["agent_id"] == relay_id || record["agent_id"] == relay2_id) {
      CHECK(record["owners"] == json{w.alice});
      logged = true;
    } else {
      CHECK(record["owners"].is_null());
    }
  }
  CHECK(logged);
}

TEST_CASE(
    "RECON-10 a Hello for a remote_agent is admitted only alongside "
    "its owner") {
  World w;
  engine::ControlPlane ops(w.t.hub(),
                           {.allow_remote_agent_registration = true});
  auto relay = ops.call(
      "register", {{"passport", kRemotePassport}, {"resume", json::object()}},
      &w.alice_conn);
  REQUIRE(relay.has_value());
  const std::string relay_id = (*relay)["agent_id"];
  w.t.restart();
  auto admitted =
      engine::admit_remote_agent_hello(w.t.hub(), w.alice_conn, relay_id);
  REQUIRE(admitted.has_value());
  CHECK(*admitted);
  auto refused =
      engine::admit_remote_agent_hello(w.t.hub(), w.bob_conn, relay_id);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == ErrorKind::kAuthFailed);
  CHECK(refused.error().message ==
        "remote agent 'relay' re-attaches only alongside its owner");
  // Not a remote_agent: the server validates the claim as usual.
  auto plain = engine::admit_remote_agent_hello(w.t.hub(), w.nobody, w.bob);
  REQUIRE(plain.has_value());
  CHECK_FALSE(*plain);
  // One registered in-process has no owners: never re-attached.
  json local = kRemotePassport;
  local["name"] = "relay-local";
  const std::string local_id =
      w.ok(nullptr, "register",
           {{"passport", local}, {"resume", json::object()}})["agent_id"];
  auto orphan =
      engine::admit_remote_agent_hello(w.t.hub(), w.alice_conn, local_id);
  REQUIRE_FALSE(orphan.has_value());
  CHECK(orphan.error().message ==
        "remote agent 'relay-local' re-attaches only alongside its owner");
  auto unknown =
      engine::admit_remote_agent_hello(w.t.hub(), w.alice_conn, "relay");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().kind == ErrorKind::kNotFound);
}

TEST_CASE("RECON-10 a connection's bindings are read at each request") {
  World w;
  TestCaller second;
  w.denied(&second, "set_resume",
           {{"agent_id", w.alice}, {"resume", json::object()}},
           not_bound(w.alice));
  second.bind(w.alice);
  w.ok(&second, "set_resume",
       {{"agent_id", w.alice}, {"resume", json::object()}});
}

}  // namespace
}  // namespace parley
