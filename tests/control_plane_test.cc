// The control plane: bad input through ControlPlane::call is refused with a
// clear message and AG2's wire code, and writes nothing; results come back in
// AG2's exact JSON shapes.
#include "engine/ops/control_plane.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/base/error.h"
#include "engine/base/ids.h"
#include "engine/base/input_limits.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using engine::ErrorKind;
using nlohmann::json;
using testing::TestHub;

std::set<std::string> keys_of(const json& object) {
  std::set<std::string> out;
  for (const auto& [key, value] : object.items()) out.insert(key);
  return out;
}

// AG2's record keys; AG2's client rejects a record with any other key.
const std::set<std::string> kPassportKeys = {
    "name", "owner", "provider", "model",   "cost",     "region",
    "auth", "kind",  "hub_id",   "version", "agent_id", "created_at"};
const std::set<std::string> kAuthKeys = {"scheme", "issuer", "audience",
                                         "key_fingerprint", "claim"};
const std::set<std::string> kMetadataKeys = {
    "channel_id",    "manifest",          "creator_id", "participants",
    "state",         "created_at",        "expires_at", "closed_at",
    "close_reason",  "parent_channel_id", "knobs",      "labels",
    "required_acks", "pending_acks",      "rejected_by"};
const std::set<std::string> kManifestKeys = {"type",
                                             "version",
                                             "participants",
                                             "knobs_schema",
                                             "default_view_policy",
                                             "expectations"};
const std::set<std::string> kParticipantKeys = {"agent_id", "role", "order",
                                                "joined_at"};
const std::set<std::string> kEnvelopeKeys = {
    "channel_id", "sender_id",   "audience", "event_type",
    "event_data", "envelope_id", "task_id",  "causation_id",
    "trace_id",   "priority",    "depth",    "idempotency_key",
    "created_at", "ttl_seconds"};

// AG2's wire code for each kind.
std::string_view wire_code_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNotFound:
      return "not_found";
    case ErrorKind::kAccessDenied:
      return "access_denied";
    case ErrorKind::kProtocol:
      return "protocol_error";
    case ErrorKind::kAuthFailed:
      return "auth_failed";
    default:
      return "error";
  }
}

// A hub with alice and bob in an active conversation holding one text.
struct Setup {
  TestHub t;
  std::string alice = t.add_agent("alice");
  std::string bob = t.add_agent("bob");
  std::string channel;

  Setup() {
    auto opened = t.open(alice, "conversation", {bob});
    REQUIRE(opened.has_value());
    channel = opened->channel_id;
    REQUIRE(t.say(channel, alice, "hi").has_value());
  }

  json envelope() const {
    return {{"channel_id", channel},
            {"sender_id", alice},
            {"audience", nullptr},
            {"event_type", "ag2.msg.text"},
            {"event_data", {{"text", "hello"}}}};
  }

  // Calls `op` and requires it to fail with `kind` and `message` (when not
  // empty), without writing anything.
  void refuses(std::string_view op, const json& params, ErrorKind kind,
               std::string_view message = {}) {
    CAPTURE(op);
    INFO("params: ", params.dump());
    const auto sequence = t.hub().store().last_sequence();
    const auto wal = t.wal(channel).size();
    auto result = t.ops().call(op, params);
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().kind == kind);
    CHECK(engine::wire_code(result.error().kind) == wire_code_of(kind));
    CHECK_FALSE(result.error().message.empty());
    if (!message.empty()) CHECK(result.error().message == message);
    CHECK(t.hub().store().last_sequence() == sequence);
    CHECK(t.wal(channel).size() == wal);
  }

  json ok(std::string_view op, const json& params) {
    CAPTURE(op);
    auto result = t.ops().call(op, params);
    REQUIRE_MESSAGE(result.has_value(), testing::error_message(result));
    return *result;
  }
};

TEST_CASE("wire codes are AG2's") {
  for (auto kind :
       {ErrorKind::kNotFound, ErrorKind::kAccessDenied, ErrorKind::kProtocol,
        ErrorKind::kAuthFailed, ErrorKind::kInboxFull, ErrorKind::kInvalid,
        ErrorKind::kConflict, ErrorKind::kStorage}) {
    CHECK(engine::wire_code(kind) == wire_code_of(kind));
  }
}

TEST_CASE("an unknown op is a protocol_error naming it") {
  Setup s;
  s.refuses("x", json::object(), ErrorKind::kProtocol,
            "unknown control-plane op: 'x'");
  s.refuses("", json::object(), ErrorKind::kProtocol,
            "unknown control-plane op: ''");
  s.refuses("Register", {{"passport", {{"name", "carol"}}}, {"resume", {}}},
            ErrorKind::kProtocol, "unknown control-plane op: 'Register'");
}

TEST_CASE("params that are not an object are refused") {
  Setup s;
  for (const json& params : {json::array({"alice"}), json("alice"), json(7),
                             json(nullptr), json(true)}) {
    s.refuses("get_agent", params, ErrorKind::kInvalid);
    s.refuses("post_envelope", params, ErrorKind::kInvalid);
  }
}

TEST_CASE("a missing param is an error naming the key") {
  Setup s;
  s.refuses("get_agent", json::object(), ErrorKind::kInvalid, "'name_or_id'");
  s.refuses("register", {{"passport", {{"name", "carol"}}}},
            ErrorKind::kInvalid, "'resume'");
  s.refuses("register", {{"resume", json::object()}}, ErrorKind::kInvalid,
            "'passport'");
  s.refuses("create_channel",
            {{"creator_id", s.alice}, {"manifest_type", "conversation"}},
            ErrorKind::kInvalid, "'participants'");
  s.refuses("post_envelope", json::object(), ErrorKind::kInvalid, "'envelope'");
  s.refuses("read_wal", json::object(), ErrorKind::kInvalid, "'channel_id'");
  s.refuses("find_envelope_by_causation",
            {{"channel_id", s.channel}, {"sender_id", s.alice}},
            ErrorKind::kInvalid, "'causation_id'");
  s.refuses("close_channel", json::object(), ErrorKind::kInvalid,
            "'channel_id'");
  s.refuses("set_rule", {{"agent_id", s.alice}}, ErrorKind::kInvalid, "'rule'");
  CHECK(s.t.hub().get_channel(s.channel)->state ==
        engine::ChannelState::kActive);
}

TEST_CASE("a param of the wrong type is an error naming it") {
  Setup s;
  s.refuses("get_agent", {{"name_or_id", 5}}, ErrorKind::kInvalid,
            "param 'name_or_id' must be a string");
  s.refuses("register", {{"passport", "alice"}, {"resume", json::object()}},
            ErrorKind::kInvalid, "param 'passport' must be an object");
  s.refuses("create_channel",
            {{"creator_id", s.alice},
             {"manifest_type", "conversation"},
             {"participants", s.bob}},
            ErrorKind::kInvalid,
            "param 'participants' must be a list of strings");
  s.refuses("create_channel",
            {{"creator_id", s.alice},
             {"manifest_type", "conversation"},
             {"participants", json::array({s.bob, 3})}},
            ErrorKind::kInvalid,
            "param 'participants' must be a list of strings");
  s.refuses("create_channel",
            {{"creator_id", s.alice},
             {"manifest_type", "conversation"},
             {"participants", json::array({s.bob})},
             {"knobs", json::array()}},
            ErrorKind::kInvalid, "param 'knobs' must be an object");
  s.refuses("create_channel",
            {{"creator_id", s.alice},
             {"manifest_type", "conversation"},
             {"participants", json::array({s.bob})},
             {"manifest_version", "1"}},
            ErrorKind::kInvalid, "param 'manifest_version' must be an integer");
  s.refuses("create_channel",
            {{"creator_id", s.alice},
             {"manifest_type", "conversation"},
             {"participants", json::array({s.bob})},
             {"labels", {{"team", 1}}}},
            ErrorKind::kInvalid);
  s.refuses("create_channel",
            {{"creator_id", s.alice},
             {"manifest_type", "conversation"},
             {"participants", json::array({s.bob})},
             {"ttl", json::array()}},
            ErrorKind::kInvalid);
  s.refuses("read_wal", {{"channel_id", s.channel}, {"since", "0"}},
            ErrorKind::kInvalid, "param 'since' must be an integer");
  s.refuses("read_wal", {{"channel_id", s.channel}, {"until", 1.5}},
            ErrorKind::kInvalid, "param 'until' must be an integer");
  s.refuses("post_envelope", {{"envelope", "hello"}}, ErrorKind::kInvalid,
            "param 'envelope' must be an object");
  s.refuses("names_for", {{"agent_ids", s.alice}}, ErrorKind::kInvalid,
            "param 'agent_ids' must be a list of strings");
  s.refuses("record_observation",
            {{"owner_id", s.alice},
             {"capability", "math"},
             {"outcome", "completed"},
             {"latency_ms", "fast"}},
            ErrorKind::kInvalid, "param 'latency_ms' must be a number");
  CHECK(s.t.hub().get_resume(s.alice)->observed.empty());
}

TEST_CASE("an unexpected param is an error naming it") {
  Setup s;
  s.refuses("get_channel", {{"channel_id", s.channel}, {"extra", 1}},
            ErrorKind::kInvalid, "unexpected param 'extra'");
  s.refuses("post_envelope", {{"envelope", s.envelope()}, {"request_id", "r1"}},
            ErrorKind::kInvalid, "unexpected param 'request_id'");
  s.refuses("register",
            {{"passport", {{"name", "carol"}}},
             {"resume", json::object()},
             {"as", "carol"}},
            ErrorKind::kInvalid, "unexpected param 'as'");
  s.refuses("close_channel", {{"channel_id", s.channel}, {"state", "closed"}},
            ErrorKind::kInvalid, "unexpected param 'state'");
  CHECK_FALSE(s.t.hub().find_agent_id("carol").has_value());
  CHECK(s.t.hub().get_channel(s.channel)->state ==
        engine::ChannelState::kActive);
}

TEST_CASE("a malformed envelope is refused and nothing is written") {
  Setup s;
  SUBCASE("an unknown key") {
    json envelope = s.envelope();
    envelope["foo"] = 1;
    s.refuses("post_envelope", {{"envelope", envelope}}, ErrorKind::kInvalid,
              "envelope has unknown key 'foo'");
  }
  SUBCASE("Parley's sequence is not an AG2 key") {
    json envelope = s.envelope();
    envelope["sequence"] = 3;
    s.refuses("post_envelope", {{"envelope", envelope}}, ErrorKind::kInvalid,
              "envelope has unknown key 'sequence'");
  }
  SUBCASE("a missing required key") {
    for (const char* key :
         {"channel_id", "sender_id", "audience", "event_type", "event_data"}) {
      CAPTURE(key);
      json envelope = s.envelope();
      envelope.erase(key);
      s.refuses("post_envelope", {{"envelope", envelope}}, ErrorKind::kInvalid,
                std::string("envelope is missing required key '") + key + "'");
    }
  }
  SUBCASE("event_data not an object") {
    for (const json& data :
         {json("hello"), json::array({1, 2}), json(nullptr), json(3)}) {
      json envelope = s.envelope();
      envelope["event_data"] = data;
      s.refuses("post_envelope", {{"envelope", envelope}}, ErrorKind::kInvalid,
                "envelope field 'event_data' must be a JSON object");
    }
  }
  SUBCASE("fields of the wrong type") {
    json envelope = s.envelope();
    envelope["depth"] = "1";
    s.refuses("post_envelope", {{"envelope", envelope}}, ErrorKind::kInvalid,
              "envelope field 'depth' must be an integer");
    envelope = s.envelope();
    envelope["audience"] = s.bob;
    s.refuses("post_envelope", {{"envelope", envelope}}, ErrorKind::kInvalid);
    envelope = s.envelope();
    envelope["priority"] = "high";
    s.refuses("post_envelope", {{"envelope", envelope}}, ErrorKind::kInvalid,
              "priority must be one of ['background', 'normal', 'urgent'], "
              "got 'high'");
  }
  SUBCASE("an oversized event_data") {
    json envelope = s.envelope();
    envelope["event_data"] = {
        {"text", std::string(engine::kMaxValueBytes + 1, 'x')}};
    s.refuses("post_envelope", {{"envelope", envelope}}, ErrorKind::kInvalid);
    auto result = s.t.ops().call("post_envelope", {{"envelope", envelope}});
    REQUIRE_FALSE(result.has_value());
    CHECK(result.error().message.find(std::to_string(engine::kMaxValueBytes)) !=
          std::string::npos);
  }
  SUBCASE("an event_data just under the limit is accepted") {
    json envelope = s.envelope();
    envelope["event_data"] = {
        {"text", std::string(engine::kMaxValueBytes - 64, 'x')}};
    auto id = s.ok("post_envelope", {{"envelope", envelope}});
    CHECK(id.is_string());
  }
}

TEST_CASE("a malformed passport, resume or rule is refused") {
  Setup s;
  s.refuses("register",
            {{"passport", {{"name", "carol"}, {"nickname", "c"}}},
             {"resume", json::object()}},
            ErrorKind::kInvalid, "passport has unknown key 'nickname'");
  s.refuses("register",
            {{"passport", {{"owner", "me"}}}, {"resume", json::object()}},
            ErrorKind::kInvalid, "passport is missing required key 'name'");
  s.refuses("register",
            {{"passport", {{"name", "carol"}, {"kind", "robot"}}},
             {"resume", json::object()}},
            ErrorKind::kInvalid,
            "Passport.kind must be one of ('agent', 'human', 'remote_agent') "
            "or None; got 'robot'");
  s.refuses("register",
            {{"passport", {{"name", "carol"}}},
             {"resume", {{"claimed_capabilities", "math"}}}},
            ErrorKind::kInvalid,
            "resume field 'claimed_capabilities' must be a list of strings");
  s.refuses("register",
            {{"passport", {{"name", "carol"}}},
             {"resume", json::object()},
             {"rule", {{"limits", {{"inbox", {{"max_pending", "ten"}}}}}}}},
            ErrorKind::kInvalid,
            "rule.limits.inbox field 'max_pending' must be an integer");
  s.refuses("set_rule",
            {{"agent_id", s.alice}, {"rule", {{"access", {{"inbound", {}}}}}}},
            ErrorKind::kInvalid, "rule.access has unknown key 'inbound'");
  CHECK_FALSE(s.t.hub().find_agent_id("carol").has_value());
  CHECK(s.t.hub().get_rule(s.alice)->version == 1);
}

TEST_CASE("register returns exactly AG2's passport keys") {
  TestHub t;
  auto passport = t.ops().call("register", {{"passport", {{"name", "alice"}}},
                                            {"resume", json::object()}});
  REQUIRE_MESSAGE(passport.has_value(), testing::error_message(passport));
  CHECK(keys_of(*passport) == kPassportKeys);
  CHECK(keys_of((*passport)["auth"]) == kAuthKeys);
  CHECK((*passport)["name"] == "alice");
  CHECK((*passport)["owner"] == "");
  CHECK((*passport)["version"] == 1);
  CHECK((*passport)["kind"].is_null());
  CHECK((*passport)["auth"]["scheme"] == "none");
  CHECK((*passport)["auth"]["claim"] == json::object());
  CHECK((*passport)["created_at"] == "2026-01-01T00:00:00+00:00");
  CHECK(engine::has_id_shape((*passport)["agent_id"].get<std::string>()));
  auto fetched =
      t.ops().call("get_agent", {{"name_or_id", (*passport)["agent_id"]}});
  REQUIRE(fetched.has_value());
  CHECK(*fetched == *passport);
}

TEST_CASE("create_channel returns exactly AG2's metadata keys") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto metadata =
      t.ops().call("create_channel", {{"creator_id", alice},
                                      {"manifest_type", "conversation"},
                                      {"participants", json::array({bob})},
                                      {"intent", "chat"},
                                      {"labels", {{"team", "red"}}}});
  REQUIRE_MESSAGE(metadata.has_value(), testing::error_message(metadata));
  CHECK(keys_of(*metadata) == kMetadataKeys);
  CHECK(keys_of((*metadata)["manifest"]) == kManifestKeys);
  REQUIRE((*metadata)["participants"].size() == 2);
  for (const json& participant : (*metadata)["participants"]) {
    CHECK(keys_of(participant) == kParticipantKeys);
  }
  CHECK((*metadata)["state"] == "active");
  CHECK((*metadata)["close_reason"] == "");
  CHECK((*metadata)["closed_at"].is_null());
  CHECK((*metadata)["required_acks"].is_null());
  CHECK((*metadata)["pending_acks"] == json::array());
  CHECK((*metadata)["labels"] == json{{"intent", "chat"}, {"team", "red"}});
  CHECK((*metadata)["expires_at"] == "2026-01-01T02:00:00+00:00");
  auto fetched =
      t.ops().call("get_channel", {{"channel_id", (*metadata)["channel_id"]}});
  REQUIRE(fetched.has_value());
  CHECK(*fetched == *metadata);
}

TEST_CASE("post_envelope returns the minted id") {
  Setup s;
  const json id = s.ok("post_envelope", {{"envelope", s.envelope()}});
  REQUIRE(id.is_string());
  CHECK(engine::has_id_shape(id.get<std::string>()));
  CHECK(s.t.wal(s.channel).back().envelope_id == id);
}

TEST_CASE("read_wal envelopes have exactly AG2's 14 keys") {
  Setup s;
  json envelope = s.envelope();
  envelope["causation_id"] = "c1";
  envelope["envelope_id"] = "ignored";
  envelope["created_at"] = "ignored";
  const json id = s.ok("post_envelope", {{"envelope", envelope}});
  const json wal = s.ok("read_wal", {{"channel_id", s.channel}});
  REQUIRE(wal.is_array());
  REQUIRE(wal.size() == s.t.wal(s.channel).size());
  for (const json& entry : wal) {
    CHECK(keys_of(entry) == kEnvelopeKeys);
    CHECK_FALSE(entry.contains("sequence"));
  }
  const json& last = wal.back();
  CHECK(last["envelope_id"] == id);
  CHECK(last["causation_id"] == "c1");
  CHECK(last["created_at"] == "2026-01-01T00:00:00+00:00");
  CHECK(last["priority"] == "normal");
  CHECK(last["depth"] == 0);
  CHECK(last["audience"].is_null());
  CHECK(last["event_data"] == json{{"text", "hello"}});
  const json sliced =
      s.ok("read_wal", {{"channel_id", s.channel}, {"since", -2}});
  REQUIRE(sliced.size() == 2);
  CHECK(sliced[1] == last);
  const json found =
      s.ok("find_envelope_by_causation", {{"channel_id", s.channel},
                                          {"sender_id", s.alice},
                                          {"causation_id", "c1"}});
  CHECK(found == last);
  CHECK(s.ok("find_envelope_by_causation", {{"channel_id", s.channel},
                                            {"sender_id", s.bob},
                                            {"causation_id", "c1"}})
            .is_null());
}

TEST_CASE("read_channel_log returns sequences 1..n with AG2 envelopes") {
  Setup s;
  s.ok("post_envelope", {{"envelope", s.envelope()}});
  const json log = s.ok("read_channel_log", {{"channel_id", s.channel}});
  const json wal = s.ok("read_wal", {{"channel_id", s.channel}});
  REQUIRE(log.is_array());
  REQUIRE(log.size() == wal.size());
  for (std::size_t i = 0; i < log.size(); ++i) {
    CHECK(keys_of(log[i]) == std::set<std::string>{"sequence", "envelope"});
    CHECK(log[i]["sequence"] == i + 1);
    CHECK(log[i]["envelope"] == wal[i]);
    CHECK(keys_of(log[i]["envelope"]) == kEnvelopeKeys);
  }
  const json tail = s.ok("read_channel_log",
                         {{"channel_id", s.channel}, {"from_sequence", 3}});
  REQUIRE(tail.size() == log.size() - 2);
  CHECK(tail[0] == log[2]);
  const json middle = s.ok(
      "read_channel_log",
      {{"channel_id", s.channel}, {"from_sequence", 2}, {"to_sequence", 3}});
  REQUIRE(middle.size() == 2);
  CHECK(middle[0] == log[1]);
  CHECK(middle[1] == log[2]);
}

TEST_CASE("op errors carry the engine's kind through call") {
  Setup s;
  s.refuses("get_channel", {{"channel_id", "nope"}}, ErrorKind::kNotFound,
            "channel not found: nope");
  s.refuses("post_envelope",
            {{"envelope",
              {{"channel_id", s.channel},
               {"sender_id", s.bob},
               {"audience", nullptr},
               {"event_type", "ag2.msg.text"},
               {"event_data", {{"text", "x"}}},
               {"depth", 99}}}},
            ErrorKind::kAccessDenied,
            "sender 'bob' exceeded delegation_depth (99 > 5)");
  s.refuses("create_channel",
            {{"creator_id", s.alice},
             {"manifest_type", "consulting"},
             {"participants", json::array({s.bob, s.alice, s.bob})}},
            ErrorKind::kProtocol, "participant listed twice: '" + s.bob + "'");
}

}  // namespace
}  // namespace parley
