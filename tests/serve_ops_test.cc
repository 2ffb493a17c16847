// Every control-plane op over a real connection, in AG2's exact shapes
// (key order included), and the concurrency AG2's hub lacks: requests of
// one connection run concurrently, so two agents sharing a connection can
// open a channel to each other (AG2's hub would block on create_channel
// until the ack timeout).
#include <doctest/doctest.h>

#include <set>
#include <thread>

#include "tests/serve_fixture.h"

namespace parley {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using testing::ServeFixture;
using testing::WsTestClient;
using namespace std::chrono_literals;

std::vector<std::string> keys_of(const ordered_json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  return keys;
}

const std::vector<std::string> kResponseKeys = {
    "request_id", "ok", "result", "error_code", "error_message", "kind"};
const std::vector<std::string> kPassportKeys = {
    "name", "owner", "provider", "model",   "cost",     "region",
    "auth", "kind",  "hub_id",   "version", "agent_id", "created_at"};
const std::vector<std::string> kResumeKeys = {"claimed_capabilities",
                                              "domains",
                                              "summary",
                                              "examples",
                                              "observed",
                                              "version",
                                              "last_updated"};
const std::vector<std::string> kRuleKeys = {"version", "access", "limits"};
const std::vector<std::string> kMetadataKeys = {
    "channel_id",    "manifest",          "creator_id", "participants",
    "state",         "created_at",        "expires_at", "closed_at",
    "close_reason",  "parent_channel_id", "knobs",      "labels",
    "required_acks", "pending_acks",      "rejected_by"};
const std::vector<std::string> kEnvelopeKeys = {
    "channel_id", "sender_id",   "audience", "event_type",
    "event_data", "envelope_id", "task_id",  "causation_id",
    "trace_id",   "priority",    "depth",    "idempotency_key",
    "created_at", "ttl_seconds"};
const std::vector<std::string> kTaskKeys = {
    "task_id",          "owner_id",   "spec",         "state",
    "created_at",       "started_at", "completed_at", "expires_at",
    "last_progress_at", "progress",   "result",       "error",
    "channel_id"};

// Runs `op` and REQUIREs an ok response with AG2's frame keys.
ordered_json ok(WsTestClient& client, std::string_view op, const json& params) {
  auto response = client.request(op, params);
  CAPTURE(op);
  REQUIRE_MESSAGE(response["ok"] == true, response.dump());
  CHECK(keys_of(response) == kResponseKeys);
  return response["result"];
}

TEST_CASE("all 30 control-plane ops answer over the wire in AG2's shapes") {
  ServeFixture serve;
  auto a = serve.connect();
  auto b = serve.connect();
  std::set<std::string> ran;
  auto run = [&](WsTestClient& client, std::string_view op,
                 const json& params) {
    ran.insert(std::string(op));
    return ok(client, op, params);
  };

  auto passport = run(*a, "register",
                      {{"passport", {{"name", "alice"}}},
                       {"resume", {{"claimed_capabilities", {"math"}}}}});
  CHECK(keys_of(passport) == kPassportKeys);
  const std::string alice = passport["agent_id"];
  const std::string bob = b->register_agent("bob");
  CHECK(keys_of(run(*a, "get_agent", {{"name_or_id", "alice"}})) ==
        kPassportKeys);
  CHECK(keys_of(run(*a, "get_resume", {{"agent_id", alice}})) == kResumeKeys);
  CHECK(run(*a, "get_skill", {{"agent_id", alice}}).is_null());
  CHECK(keys_of(run(*a, "get_rule", {{"agent_id", alice}})) == kRuleKeys);
  CHECK(run(*a, "find_agent_id", {{"name", "bob"}}) == bob);
  CHECK(run(*a, "names_for", {{"agent_ids", {alice, "nobody"}}}) ==
        ordered_json{{alice, "alice"}, {"nobody", "nobody"}});
  auto listed = run(*a, "list_agents", {{"capability", "math"}});
  REQUIRE(listed.size() == 1);
  CHECK(keys_of(listed[0]) == kPassportKeys);
  CHECK(run(*a, "set_resume",
            {{"agent_id", alice}, {"resume", {{"summary", "adds"}}}})
            .is_null());
  CHECK(run(*a, "set_skill", {{"agent_id", alice}, {"skill_md", "# A"}})
            .is_null());
  CHECK(run(*a, "get_skill", {{"agent_id", alice}}) == "# A");
  CHECK(run(*a, "set_rule", {{"agent_id", alice}, {"rule", json::object()}})
            .is_null());

  // Channels and envelopes.
  const std::string create =
      a->send_request("create_channel", {{"creator_id", alice},
                                         {"manifest_type", "conversation"},
                                         {"participants", {bob}},
                                         {"labels", {{"topic", "sums"}}}});
  ran.insert("create_channel");
  auto invite = b->next_of_kind("notify");
  REQUIRE(invite.has_value());
  CHECK(keys_of(*invite) ==
        std::vector<std::string>{"envelope", "recipient_id", "kind"});
  CHECK(keys_of((*invite)["envelope"]) == kEnvelopeKeys);
  testing::ack_invite(*b, *invite);
  auto created = a->await_response(create);
  REQUIRE(created["ok"] == true);
  CHECK(keys_of(created["result"]) == kMetadataKeys);
  const std::string channel = created["result"]["channel_id"];
  CHECK(keys_of(run(*a, "get_channel", {{"channel_id", channel}})) ==
        kMetadataKeys);
  auto channels = run(*a, "list_channels", {{"agent_id", alice}});
  REQUIRE(channels.size() == 1);
  CHECK(keys_of(channels[0]) == kMetadataKeys);
  const std::string posted = run(*a, "post_envelope",
                                 {{"envelope",
                                   {{"channel_id", channel},
                                    {"sender_id", alice},
                                    {"audience", nullptr},
                                    {"event_type", "ag2.msg.text"},
                                    {"event_data", {{"text", "2+2?"}}},
                                    {"causation_id", "c-1"}}}});
  auto wal = run(*a, "read_wal", {{"channel_id", channel}});
  REQUIRE(wal.size() == 4);  // invite, ack, opened, text
  for (const auto& envelope : wal) CHECK(keys_of(envelope) == kEnvelopeKeys);
  CHECK(wal[3]["envelope_id"] == posted);
  auto found = run(
      *a, "find_envelope_by_causation",
      {{"channel_id", channel}, {"sender_id", alice}, {"causation_id", "c-1"}});
  CHECK(keys_of(found) == kEnvelopeKeys);
  CHECK(run(*b, "can_send", {{"channel_id", channel}, {"sender_id", bob}}) ==
        true);
  auto turns = run(*b, "pending_turns_for", {{"agent_id", bob}});
  for (const auto& turn : turns) {
    CHECK(keys_of(turn) == std::vector<std::string>{"channel_id",
                                                    "triggering_envelope_id",
                                                    "expected_at"});
  }
  CHECK(run(*b, "report_turn_failure",
            {{"channel_id", channel},
             {"agent_id", bob},
             {"envelope_id", posted},
             {"error", "boom"}})
            .is_null());

  // Tasks.
  CHECK(run(*a, "observe_task",
            {{"metadata",
              {{"task_id", "task-1"},
               {"owner_id", alice},
               {"spec", {{"title", "add"}, {"capability", "math"}}},
               {"state", "running"},
               {"channel_id", channel}}}})
            .is_null());
  CHECK(keys_of(run(*a, "get_task", {{"task_id", "task-1"}})) == kTaskKeys);
  auto tasks = run(*a, "list_tasks", {{"agent_id", alice}});
  REQUIRE(tasks.size() == 1);
  CHECK(keys_of(tasks[0]) == kTaskKeys);
  CHECK(run(*a, "checkpoint_task",
            {{"task_id", "task-1"}, {"state", {{"step", 3}}}})
            .is_null());
  CHECK(run(*a, "read_task_checkpoint", {{"task_id", "task-1"}}) ==
        ordered_json{{"step", 3}});
  CHECK(run(*a, "update_task",
            {{"task_id", "task-1"}, {"progress", {{"pct", 50}}}})
            .is_null());
  CHECK(run(*a, "record_observation",
            {{"owner_id", alice},
             {"capability", "math"},
             {"outcome", "completed"},
             {"latency_ms", 12.5}})
            .is_null());
  CHECK(run(*a, "fire_task_event",
            {{"task_id", "task-1"},
             {"kind", "mirror_failed"},
             {"payload", {{"owner_id", alice}, {"op", "update"}}}})
            .is_null());
  CHECK(keys_of(run(*a, "close_channel",
                    {{"channel_id", channel}, {"reason", "done"}})) ==
        kMetadataKeys);
  CHECK(run(*b, "unregister", {{"agent_id", bob}}).is_null());
  CHECK(ran.size() == 30);
}

TEST_CASE(
    "two agents on one connection open a channel to each other: the "
    "ack arrives while create_channel is pending and the channel "
    "opens") {
  ServeFixture serve;
  auto shared = serve.connect();
  const std::string alice = shared->register_agent("alice");
  const std::string bob = shared->register_agent("bob");
  const std::string create =
      shared->send_request("create_channel", {{"creator_id", alice},
                                              {"manifest_type", "consulting"},
                                              {"participants", {bob}}});
  auto invite = shared->next_of_kind("notify");
  REQUIRE(invite.has_value());
  CHECK((*invite)["recipient_id"] == bob);
  testing::ack_invite(*shared, *invite);
  auto created = shared->await_response(create, 5s);
  REQUIRE_MESSAGE(created["ok"] == true, created.dump());
  CHECK(created["result"]["state"] == "active");
}

TEST_CASE(
    "requests of one connection run concurrently: a pending "
    "create_channel does not hold up the requests after it") {
  ServeFixture serve;
  auto client = serve.connect();
  const std::string alice = client->register_agent("alice");
  auto silent = serve.connect();
  const std::string bob = silent->register_agent("bob");
  const std::string create =
      client->send_request("create_channel", {{"creator_id", alice},
                                              {"manifest_type", "conversation"},
                                              {"participants", {bob}}});
  // Bob never acks; other requests on the same connection are answered.
  const auto started = std::chrono::steady_clock::now();
  CHECK(client->call("find_agent_id", {{"name", "bob"}}) == bob);
  CHECK(std::chrono::steady_clock::now() - started < 2s);
  auto invite = silent->next_of_kind("notify");
  REQUIRE(invite.has_value());
  testing::ack_invite(*silent, *invite);
  CHECK(client->await_response(create)["ok"] == true);
}

TEST_CASE(
    "RECON-09 a registration on one connection is discoverable from "
    "another, a discussion between two connections lands both "
    "texts") {
  ServeFixture serve;
  auto one = serve.connect();
  auto two = serve.connect();
  const std::string alice = one->register_agent("alice");
  const std::string bob = two->register_agent("bob");
  CHECK(two->call("get_agent", {{"name_or_id", "alice"}})["agent_id"] == alice);
  auto ghost = two->request("get_agent", {{"name_or_id", "ghost"}});
  CHECK(ghost["error_code"] == "not_found");
  const std::string channel =
      testing::open_channel(*one, alice, *two, bob, "discussion");
  one->call("post_envelope", testing::text_envelope(channel, alice, "first"));
  two->call("post_envelope", testing::text_envelope(channel, bob, "second"));
  auto wal = one->call("read_wal", {{"channel_id", channel}});
  std::set<std::string> senders;
  for (const auto& envelope : wal) {
    if (envelope["event_type"] == "ag2.msg.text") {
      senders.insert(envelope["sender_id"].get<std::string>());
    }
  }
  CHECK(senders == std::set<std::string>{alice, bob});
  CHECK(one->call("read_task_checkpoint", {{"task_id", "t-9"}}).is_null());
}

TEST_CASE(
    "RECON-05 crash, re-attach, resume: the pending turn is reported "
    "and answered once") {
  ServeFixture serve;
  auto alice_client = serve.connect();
  auto bob_client = serve.connect();
  const std::string alice = alice_client->register_agent("alice");
  const std::string bob = bob_client->register_agent("bob");
  const std::string channel = testing::open_channel(
      *alice_client, alice, *bob_client, bob, "discussion");
  alice_client->call(
      "post_envelope",
      testing::text_envelope(channel, alice, "Bob, please weigh in."));
  bob_client.reset();  // bob drops without answering
  auto again = serve.connect();
  again->send({{"name", "bob"}, {"kind", "hello"}});
  REQUIRE(again->next_of_kind("welcome").has_value());
  auto turns = again->call("pending_turns_for", {{"agent_id", bob}});
  REQUIRE(turns.size() == 1);
  CHECK(turns[0]["channel_id"] == channel);
  again->call("post_envelope",
              testing::text_envelope(channel, bob, "Sure — here is my take."));
  int from_bob = 0;
  for (const auto& envelope :
       again->call("read_wal", {{"channel_id", channel}})) {
    from_bob += envelope["sender_id"] == bob &&
                envelope["event_type"] == "ag2.msg.text";
  }
  CHECK(from_bob == 1);
}

}  // namespace
}  // namespace parley
