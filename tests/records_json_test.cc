// JSON codecs of AG2's records (engine/json/records_json.h). Golden strings
// are copied from tests/golden (AG2's own outputs) and compared byte for byte
// through dump_python.
#include "engine/json/records_json.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/flex_json.h"
#include "engine/json/python_json.h"

namespace parley::engine {
namespace {

using Json = nlohmann::json;

Json parse(std::string_view text) { return Json::parse(text); }

// The message of a parse that must fail with kInvalid.
template <typename T>
std::string error_of(const Result<T>& result) {
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().kind == ErrorKind::kInvalid);
  CHECK(wire_code(result.error().kind) == "error");
  return result.error().message;
}

void check_same(const Envelope& a, const Envelope& b) {
  CHECK(a.channel_id == b.channel_id);
  CHECK(a.sender_id == b.sender_id);
  CHECK(a.audience == b.audience);
  CHECK(a.event_type == b.event_type);
  CHECK(flex_to_json(a.event_data) == flex_to_json(b.event_data));
  CHECK(a.envelope_id == b.envelope_id);
  CHECK(a.task_id == b.task_id);
  CHECK(a.causation_id == b.causation_id);
  CHECK(a.trace_id == b.trace_id);
  CHECK(a.priority == b.priority);
  CHECK(a.depth == b.depth);
  CHECK(a.idempotency_key == b.idempotency_key);
  CHECK(a.created_at == b.created_at);
  CHECK(a.ttl_seconds == b.ttl_seconds);
}

Envelope full_envelope() {
  Envelope e;
  e.channel_id = "c-1";
  e.sender_id = "alice";
  e.audience = std::vector<std::string>{"bob"};
  e.event_type = "ag2.channel.invite";
  e.event_data = *to_flex(parse(R"({"reason":"research"})"));
  e.envelope_id = "env-1";
  e.task_id = "t-1";
  e.causation_id = "env-0";
  e.trace_id = "trace-1";
  e.priority = "urgent";
  e.depth = 0;
  e.created_at = "2026-04-12T18:22:01Z";
  e.ttl_seconds = 60;
  e.idempotency_key = "idem-1";
  return e;
}

// The minimal envelope a client posts.
constexpr std::string_view kPosted =
    R"({"channel_id": "c1", "sender_id": "alice", "audience": null,
        "event_type": "ag2.msg.text", "event_data": {"text": "hi"}})";

Json posted_with(std::string_view key, Json value) {
  Json posted = parse(kPosted);
  posted[std::string(key)] = std::move(value);
  return posted;
}

// --- Golden AG2 outputs ----------------------------------------------------

// tests/golden/ag2-store-smoke/agents/18ea415ef8e2ed809ce7c6a7549497ab/*.json
constexpr std::string_view kStorePassport =
    R"({"name": "erin", "owner": "", "provider": null, "model": null, )"
    R"("cost": null, "region": null, "auth": {"scheme": "none", )"
    R"("issuer": null, "audience": null, "key_fingerprint": null, )"
    R"("claim": {}}, "kind": null, "hub_id": null, "version": 1, )"
    R"("agent_id": "18ea415ef8e2ed809ce7c6a7549497ab", )"
    R"("created_at": "2026-11-22T03:47:57.618922+00:00"})";
constexpr std::string_view kStoreResume =
    R"({"claimed_capabilities": [], "domains": [], "summary": "", )"
    R"("examples": [], "observed": {}, "version": 1, "last_updated": ""})";
constexpr std::string_view kStoreRule =
    R"({"version": 1, "access": {"inbound_from": ["*"], "outbound_to": )"
    R"(["*"], "channel_types": {"initiate": ["*"], "accept": ["*"]}}, )"
    R"("limits": {"max_concurrent_channels": 0, "max_concurrent_tasks": 0, )"
    R"("channel_ttl_default": "2h", "task_ttl_default": "15m", "rate": )"
    R"({"per_minute": 0, "burst": 0}, "delegation_depth": 5, "inbox": )"
    R"({"max_pending": 1000, "overflow": "reject", "high_water": null}}})";

// tests/golden/ag2-store-smoke/channels/18ea415ef6ef293d5bec87eabe61ccca/
// metadata.json
constexpr std::string_view kStoreMetadata =
    R"({"channel_id": "18ea415ef6ef293d5bec87eabe61ccca", "manifest": )"
    R"({"type": "conversation", "version": 1, "participants": {"min": 2, )"
    R"("max": 2, "roles": ["initiator", "respondent"]}, "knobs_schema": {}, )"
    R"("default_view_policy": "windowed_summary", "expectations": [{"name": )"
    R"("max_silence", "on_violation": "audit", "params": {"seconds": 3600}, )"
    R"("applies_to": null}]}, "creator_id": )"
    R"("18ea415ef6a36d322e5068cfe782b291", "participants": [{"agent_id": )"
    R"("18ea415ef6a36d322e5068cfe782b291", "role": "initiator", "order": 0, )"
    R"("joined_at": "2026-11-22T03:47:57.586170+00:00"}, {"agent_id": )"
    R"("18ea415ef6bf60ef829f7f6b08b41809", "role": "respondent", "order": 1, )"
    R"("joined_at": "2026-11-22T03:47:57.586170+00:00"}], "state": "active", )"
    R"("created_at": "2026-11-22T03:47:57.586170+00:00", "expires_at": )"
    R"("2026-11-22T05:47:57.586170+00:00", "closed_at": null, )"
    R"("close_reason": "", "parent_channel_id": null, "knobs": {}, )"
    R"("labels": {}, "required_acks": null, "pending_acks": [], )"
    R"("rejected_by": []})";

// tests/golden/scripts/basics.ag2.jsonl line 1: register's result.
constexpr std::string_view kRegisterResult =
    R"({"agent_id": "18ea41813017e1414aa2443b631c31ef", "auth": )"
    R"({"audience": null, "claim": {}, "issuer": null, "key_fingerprint": )"
    R"(null, "scheme": "none"}, "cost": null, "created_at": )"
    R"("2026-01-01T00:00:00+00:00", "hub_id": null, "kind": null, "model": )"
    R"(null, "name": "alice", "owner": "", "provider": null, "region": null, )"
    R"("version": 1})";

// tests/golden/scripts/basics.ag2.jsonl line 3: create_channel's result.
constexpr std::string_view kCreateChannelResult =
    R"({"channel_id": "18ea4181306718f9aa17f3abac999c99", "close_reason": )"
    R"("", "closed_at": null, "created_at": "2026-01-01T00:00:00+00:00", )"
    R"("creator_id": "18ea41813017e1414aa2443b631c31ef", "expires_at": )"
    R"("2026-01-01T02:00:00+00:00", "knobs": {}, "labels": {}, "manifest": )"
    R"({"default_view_policy": "windowed_summary", "expectations": )"
    R"([{"applies_to": null, "name": "max_silence", "on_violation": "audit", )"
    R"("params": {"seconds": 3600}}], "knobs_schema": {}, "participants": )"
    R"({"max": 2, "min": 2, "roles": ["initiator", "respondent"]}, "type": )"
    R"("conversation", "version": 1}, "parent_channel_id": null, )"
    R"("participants": [{"agent_id": "18ea41813017e1414aa2443b631c31ef", )"
    R"("joined_at": "2026-01-01T00:00:00+00:00", "order": 0, "role": )"
    R"("initiator"}, {"agent_id": "18ea41813047f8cf42fd32a8ed7f44cd", )"
    R"("joined_at": "2026-01-01T00:00:00+00:00", "order": 1, "role": )"
    R"("respondent"}], "pending_acks": [], "rejected_by": [], )"
    R"("required_acks": null, "state": "active"})";

// tests/golden/scripts/random-1.ag2.jsonl line 54: a workflow channel.
constexpr std::string_view kWorkflowMetadata =
    R"({"channel_id": "18ea417ed03dbef164d662cc196bf48e", "close_reason": )"
    R"("", "closed_at": null, "created_at": "2026-01-01T00:01:17+00:00", )"
    R"("creator_id": "18ea417ecd27c29fc170464323c209ad", "expires_at": )"
    R"("2026-01-01T02:01:17+00:00", "knobs": {"graph": {"default_target": )"
    R"(null, "initial_speaker": "18ea417ecd27c29fc170464323c209ad", )"
    R"("max_turns": 6, "transitions": [{"priority": 5, "then": {"args": {}, )"
    R"("name": "round_robin"}, "when": {"args": {}, "name": "always"}}, )"
    R"({"priority": 1, "then": {"args": {}, "name": "revert_to_initiator"}, )"
    R"("when": {"args": {"tool_name": "escalate"}, "name": "tool_called"}}, )"
    R"({"priority": 0, "then": {"args": {"reason": "custom_done"}, "name": )"
    R"("terminate"}, "when": {"args": {"key": "done", "value": true}, )"
    R"("name": "context_equals"}}]}}, "labels": {}, "manifest": )"
    R"({"default_view_policy": "named_windowed_summary", "expectations": )"
    R"([{"applies_to": null, "name": "turn_within", "on_violation": "warn", )"
    R"("params": {"seconds": 120}}, {"applies_to": null, "name": )"
    R"("turn_within", "on_violation": "auto_close", "params": {"seconds": )"
    R"(600}}], "knobs_schema": {"graph": "TransitionGraph"}, )"
    R"("participants": {"max": null, "min": 2, "roles": []}, "type": )"
    R"("workflow", "version": 1}, "parent_channel_id": null, )"
    R"("participants": [{"agent_id": "18ea417ecd27c29fc170464323c209ad", )"
    R"("joined_at": "2026-01-01T00:01:17+00:00", "order": 0, "role": )"
    R"("initiator"}, {"agent_id": "18ea417ecd04bceb0267201b2af05184", )"
    R"("joined_at": "2026-01-01T00:01:17+00:00", "order": 1, "role": )"
    R"("respondent"}], "pending_acks": [], "rejected_by": [], )"
    R"("required_acks": null, "state": "active"})";

// tests/golden/scripts/basics.ag2.jsonl line 7: the invite of read_wal.
constexpr std::string_view kWalInvite =
    R"({"audience": ["18ea41813047f8cf42fd32a8ed7f44cd"], "causation_id": )"
    R"(null, "channel_id": "18ea4181306718f9aa17f3abac999c99", "created_at": )"
    R"("2026-01-01T00:00:00+00:00", "depth": 0, "envelope_id": )"
    R"("18ea418130771c635df0230adae96c41", "event_data": {"channel_id": )"
    R"("18ea4181306718f9aa17f3abac999c99", "creator_id": )"
    R"("18ea41813017e1414aa2443b631c31ef", "knobs": {}, "labels": {}, )"
    R"("manifest_type": "conversation", "manifest_version": 1}, )"
    R"("event_type": "ag2.channel.invite", "idempotency_key": null, )"
    R"("priority": "normal", "sender_id": "18ea41813017e1414aa2443b631c31ef", )"
    R"("task_id": null, "trace_id": null, "ttl_seconds": null})";

ChannelManifest conversation_manifest() {
  ChannelManifest m;
  m.type = "conversation";
  m.participants.max = 2;
  m.participants.roles = {"initiator", "respondent"};
  m.default_view_policy = "windowed_summary";
  m.expectations.push_back(
      {"max_silence", "audit", R"({"seconds":3600})", std::nullopt});
  return m;
}

// --- Envelope --------------------------------------------------------------

TEST_CASE("ENV-01 envelope round-trips every field, nulls included") {
  const Envelope original = full_envelope();
  const Json encoded = to_json(original);
  auto decoded = envelope_from_json(encoded);
  REQUIRE(decoded.has_value());
  check_same(*decoded, original);
  CHECK(dump_python(to_json(*decoded)) == dump_python(encoded));

  Envelope sparse;
  sparse.channel_id = "c-1";
  sparse.sender_id = "alice";
  sparse.event_type = "ag2.msg.text";
  sparse.event_data = *to_flex(Json::object());
  auto sparse_back = envelope_from_json(to_json(sparse));
  REQUIRE(sparse_back.has_value());
  check_same(*sparse_back, sparse);
  CHECK_FALSE(sparse_back->task_id.has_value());
  CHECK_FALSE(sparse_back->ttl_seconds.has_value());
}

TEST_CASE("ENV-01 audience null and empty list stay distinct") {
  Envelope broadcast = full_envelope();
  broadcast.audience.reset();
  Envelope nobody = full_envelope();
  nobody.audience = std::vector<std::string>{};

  CHECK(to_json(broadcast)["audience"].is_null());
  CHECK(to_json(nobody)["audience"] == Json::array());
  auto broadcast_back = envelope_from_json(to_json(broadcast));
  auto nobody_back = envelope_from_json(to_json(nobody));
  REQUIRE(broadcast_back.has_value());
  REQUIRE(nobody_back.has_value());
  CHECK_FALSE(broadcast_back->audience.has_value());
  REQUIRE(nobody_back->audience.has_value());
  CHECK(nobody_back->audience->empty());
}

TEST_CASE(
    "ENV-01 encoding is key-sorted and byte-identical for equal envelopes") {
  Envelope a = full_envelope();
  Envelope b = full_envelope();
  a.event_data = *to_flex(parse(R"({"z":1,"a":{"y":2,"b":3}})"));
  b.event_data = *to_flex(parse(R"({"a":{"b":3,"y":2},"z":1})"));
  CHECK(dump_python(to_json(a)) == dump_python(to_json(b)));
  CHECK(dump_compact(to_json(a)) == dump_compact(to_json(b)));
  CHECK(dump_compact(to_json(a)).starts_with(R"({"audience":["bob"],)"));
}

TEST_CASE("envelope JSON has exactly AG2's keys, never sequence") {
  Envelope e = full_envelope();
  e.sequence = 42;
  const Json encoded = to_json(e);
  CHECK(encoded.size() == 14);
  CHECK_FALSE(encoded.contains("sequence"));
  CHECK(envelope_to_json(e) == encoded);

  const auto ordered = to_ordered_json(e);
  std::vector<std::string> keys;
  for (auto it = ordered.begin(); it != ordered.end(); ++it) {
    keys.push_back(it.key());
  }
  CHECK(keys == std::vector<std::string>{
                    "channel_id", "sender_id", "audience", "event_type",
                    "event_data", "envelope_id", "task_id", "causation_id",
                    "trace_id", "priority", "depth", "idempotency_key",
                    "created_at", "ttl_seconds"});
}

TEST_CASE("envelope from AG2's WAL re-encodes byte for byte") {
  auto envelope = envelope_from_json(parse(kWalInvite));
  REQUIRE(envelope.has_value());
  CHECK(envelope->sequence == 0);
  CHECK(dump_python(to_json(*envelope)) == kWalInvite);
}

TEST_CASE("ENV-02 priority defaults to normal and is a closed set") {
  auto plain = envelope_from_json(parse(kPosted));
  REQUIRE(plain.has_value());
  CHECK(plain->priority == "normal");
  CHECK(to_json(*plain)["priority"] == "normal");

  for (const char* priority : {"background", "normal", "urgent"}) {
    auto e = envelope_from_json(posted_with("priority", priority));
    REQUIRE(e.has_value());
    CHECK(e->priority == priority);
    auto again = envelope_from_json(to_json(*e));
    REQUIRE(again.has_value());
    CHECK(again->priority == priority);
  }

  const std::string message =
      error_of(envelope_from_json(posted_with("priority", "critical")));
  CHECK(message ==
        "priority must be one of ['background', 'normal', 'urgent'], got "
        "'critical'");
  CHECK(error_of(envelope_from_json(posted_with("priority", 3)))
            .find("priority") != std::string::npos);
  CHECK(error_of(envelope_from_json(posted_with("priority", nullptr)))
            .find("priority") != std::string::npos);
}

TEST_CASE("ENV-04 task_id and depth round-trip, task_id is always encoded") {
  Json posted = posted_with("task_id", "01932task");
  posted["depth"] = 4;
  auto tagged = envelope_from_json(posted);
  REQUIRE(tagged.has_value());
  CHECK(tagged->task_id == "01932task");
  CHECK(tagged->depth == 4);
  auto tagged_back = envelope_from_json(to_json(*tagged));
  REQUIRE(tagged_back.has_value());
  CHECK(tagged_back->task_id == "01932task");
  CHECK(tagged_back->depth == 4);

  auto untagged = envelope_from_json(parse(kPosted));
  REQUIRE(untagged.has_value());
  CHECK_FALSE(untagged->task_id.has_value());
  const Json encoded = to_json(*untagged);
  REQUIRE(encoded.contains("task_id"));
  CHECK(encoded["task_id"].is_null());

  for (const char* payload : {R"({"value":{"summary":"done","tokens":420}})",
                              R"({"error":"ModelTimeoutError: 30s"})"}) {
    auto e = envelope_from_json(posted_with("event_data", parse(payload)));
    REQUIRE(e.has_value());
    auto back = envelope_from_json(to_json(*e));
    REQUIRE(back.has_value());
    CHECK(to_json(*back)["event_data"] == parse(payload));
  }
}

TEST_CASE("envelope parsing refuses unknown keys") {
  CHECK(error_of(envelope_from_json(posted_with("foo", 1))) ==
        "envelope has unknown key 'foo'");
  CHECK(error_of(envelope_from_json(posted_with("sequence", 3))) ==
        "envelope has unknown key 'sequence'");
}

TEST_CASE("envelope parsing refuses missing required keys") {
  for (const char* key :
       {"channel_id", "sender_id", "audience", "event_type", "event_data"}) {
    Json posted = parse(kPosted);
    posted.erase(key);
    CHECK(error_of(envelope_from_json(posted)) ==
          std::string("envelope is missing required key '") + key + "'");
  }
}

TEST_CASE("envelope parsing refuses wrong types") {
  CHECK(error_of(envelope_from_json(posted_with("depth", "4"))) ==
        "envelope field 'depth' must be an integer");
  CHECK(error_of(envelope_from_json(posted_with("depth", 4.0))) ==
        "envelope field 'depth' must be an integer");
  CHECK(error_of(envelope_from_json(posted_with("depth", true))) ==
        "envelope field 'depth' must be an integer");
  CHECK(error_of(envelope_from_json(posted_with("event_data", "hi"))) ==
        "envelope field 'event_data' must be a JSON object");
  CHECK(error_of(envelope_from_json(posted_with("audience", "bob"))) ==
        "envelope field 'audience' must be a list of strings or null");
  CHECK(error_of(envelope_from_json(posted_with("audience", parse("[1]")))) ==
        "envelope field 'audience' must be a list of strings or null");
  CHECK(error_of(envelope_from_json(posted_with("sender_id", nullptr))) ==
        "envelope field 'sender_id' must be a string");
  CHECK(error_of(envelope_from_json(posted_with("ttl_seconds", "60"))) ==
        "envelope field 'ttl_seconds' must be an integer or null");
  CHECK(error_of(envelope_from_json(posted_with("task_id", 7))) ==
        "envelope field 'task_id' must be a string or null");
  CHECK(error_of(envelope_from_json(parse("[]"))) ==
        "envelope must be a JSON object");
}

// --- Passport --------------------------------------------------------------

TEST_CASE("default passport equals AG2's passport.json byte for byte") {
  auto passport = passport_from_json(parse(R"({"name": "erin"})"));
  REQUIRE(passport.has_value());
  passport->agent_id = "18ea415ef8e2ed809ce7c6a7549497ab";
  passport->created_at = "2026-11-22T03:47:57.618922+00:00";
  CHECK(dump_python(to_ordered_json(*passport)) == kStorePassport);

  auto reread = passport_from_json(parse(kStorePassport));
  REQUIRE(reread.has_value());
  CHECK(dump_python(to_ordered_json(*reread)) == kStorePassport);
}

TEST_CASE("register result shape equals AG2's, keys sorted") {
  Passport alice;
  alice.name = "alice";
  alice.agent_id = "18ea41813017e1414aa2443b631c31ef";
  alice.created_at = "2026-01-01T00:00:00+00:00";
  CHECK(dump_python(to_json(alice)) == kRegisterResult);
}

TEST_CASE("passport fields round-trip, cost normalised to AG2's three keys") {
  auto passport = passport_from_json(parse(R"({
      "name": "bob", "owner": "acme", "provider": "anthropic",
      "model": "m-1", "cost": {"latency_tier": "fast", "input_per_mtok": 3},
      "region": "eu", "auth": {"scheme": "token", "issuer": "iss",
      "claim": {"token": "s3cret"}}, "kind": "human", "hub_id": "h1",
      "version": 2})"));
  REQUIRE(passport.has_value());
  CHECK(passport->effective_kind() == "human");
  CHECK(passport->auth.issuer == "iss");
  CHECK_FALSE(passport->auth.audience.has_value());
  CHECK(to_json(*passport)["cost"] ==
        parse(R"({"input_per_mtok": 3, "output_per_mtok": null,
                  "latency_tier": "fast"})"));
  CHECK(
      dump_python(to_ordered_json(*passport)["cost"]) ==
      R"({"input_per_mtok": 3, "output_per_mtok": null, "latency_tier": "fast"})");
  CHECK(to_json(*passport)["auth"]["claim"] == parse(R"({"token":"s3cret"})"));
  auto again = passport_from_json(to_json(*passport));
  REQUIRE(again.has_value());
  CHECK(to_json(*again) == to_json(*passport));
}

TEST_CASE("passport kind is checked like AG2's constructor") {
  for (const char* kind : {"agent", "human", "remote_agent"}) {
    Json input = parse(R"({"name": "a"})");
    input["kind"] = kind;
    auto passport = passport_from_json(input);
    REQUIRE(passport.has_value());
    CHECK(passport->kind == kind);
  }
  CHECK(passport_from_json(parse(R"({"name": "a", "kind": null})"))
            ->effective_kind() == "agent");
  CHECK(error_of(
            passport_from_json(parse(R"({"name": "a", "kind": "huMAn"})"))) ==
        "Passport.kind must be one of ('agent', 'human', 'remote_agent') or "
        "None; got 'huMAn'");
}

TEST_CASE("passport parsing is strict") {
  CHECK(error_of(passport_from_json(parse(R"({"name": "a", "nick": "b"})"))) ==
        "passport has unknown key 'nick'");
  CHECK(error_of(passport_from_json(parse(R"({"owner": "b"})"))) ==
        "passport is missing required key 'name'");
  CHECK(
      error_of(passport_from_json(parse(R"({"name": "a", "version": "1"})"))) ==
      "passport field 'version' must be an integer");
  CHECK(error_of(passport_from_json(parse(R"({"name": 5})"))) ==
        "passport field 'name' must be a string");
  CHECK(error_of(passport_from_json(
            parse(R"({"name": "a", "auth": {"scheme": "none", "x": 1}})"))) ==
        "passport.auth has unknown key 'x'");
  CHECK(error_of(passport_from_json(
            parse(R"({"name": "a", "auth": {"claim": "token"}})"))) ==
        "passport.auth field 'claim' must be a JSON object");
  CHECK(error_of(passport_from_json(parse(R"({"name": "a", "auth": null})"))) ==
        "passport field 'auth' must be a JSON object");
  CHECK(error_of(passport_from_json(
            parse(R"({"name": "a", "cost": {"per_token": 1}})"))) ==
        "passport.cost has unknown key 'per_token'");
  CHECK(error_of(passport_from_json(
            parse(R"({"name": "a", "cost": {"input_per_mtok": "1"}})"))) ==
        "passport.cost field 'input_per_mtok' must be a number or null");
  CHECK(error_of(passport_from_json(parse(R"({"name": "a", "cost": 1})"))) ==
        "passport field 'cost' must be a JSON object or null");
}

// --- Resume ----------------------------------------------------------------

TEST_CASE("default resume equals AG2's resume.json byte for byte") {
  auto resume = resume_from_json(Json::object());
  REQUIRE(resume.has_value());
  CHECK(dump_python(to_ordered_json(*resume)) == kStoreResume);
  CHECK(dump_python(to_ordered_json(Resume{})) == kStoreResume);
}

TEST_CASE("resume fields round-trip") {
  const Json input = parse(R"({
      "claimed_capabilities": ["math"], "domains": ["science"],
      "summary": "adds", "examples": [{"title": "sum", "task_id": "t1"}],
      "observed": {"analysis": {"n": 3, "completed": 1, "failed": 1,
                                "expired": 1, "p50_latency_ms": 420},
                   "slow": {"p50_latency_ms": 12.5}},
      "version": 4, "last_updated": "2026-01-01T00:00:00+00:00"})");
  auto resume = resume_from_json(input);
  REQUIRE(resume.has_value());
  REQUIRE(resume->examples.size() == 1);
  CHECK(resume->examples[0].outcome == "");
  CHECK(resume->observed.at("analysis").expired == 1);
  const Json encoded = to_json(*resume);
  CHECK(encoded["observed"]["analysis"] ==
        parse(R"({"n": 3, "completed": 1, "failed": 1, "expired": 1,
                  "p50_latency_ms": 420})"));
  CHECK(dump_python(encoded["observed"]["analysis"]["p50_latency_ms"]) ==
        "420");
  CHECK(dump_python(encoded["observed"]["slow"]["p50_latency_ms"]) == "12.5");
  CHECK(encoded["examples"][0] ==
        parse(R"({"title": "sum", "outcome": "", "task_id": "t1",
                  "channel_id": null, "when": null, "note": ""})"));
  auto again = resume_from_json(encoded);
  REQUIRE(again.has_value());
  CHECK(to_json(*again) == encoded);
}

TEST_CASE("resume parsing is strict") {
  CHECK(error_of(resume_from_json(parse(R"({"skills": []})"))) ==
        "resume has unknown key 'skills'");
  CHECK(error_of(
            resume_from_json(parse(R"({"examples": [{"outcome": "x"}]})"))) ==
        "resume.examples[0] is missing required key 'title'");
  CHECK(error_of(resume_from_json(
            parse(R"({"examples": [{"title": "t", "extra": 1}]})"))) ==
        "resume.examples[0] has unknown key 'extra'");
  CHECK(error_of(resume_from_json(parse(R"({"domains": "science"})"))) ==
        "resume field 'domains' must be a list of strings");
  CHECK(
      error_of(resume_from_json(parse(R"({"observed": {"x": {"n": "1"}}})"))) ==
      "resume.observed['x'] field 'n' must be an integer");
  CHECK(
      error_of(resume_from_json(parse(R"({"observed": {"x": {"p95": 1}}})"))) ==
      "resume.observed['x'] has unknown key 'p95'");
  CHECK(error_of(resume_from_json(parse(R"({"examples": {}})"))) ==
        "resume field 'examples' must be a list");
}

// --- Rule ------------------------------------------------------------------

TEST_CASE("default rule equals AG2's rule.json byte for byte") {
  auto rule = rule_from_json(Json::object());
  REQUIRE(rule.has_value());
  CHECK(dump_python(to_ordered_json(*rule)) == kStoreRule);
  auto reread = rule_from_json(parse(kStoreRule));
  REQUIRE(reread.has_value());
  CHECK(dump_python(to_ordered_json(*reread)) == kStoreRule);
}

TEST_CASE("rule fields round-trip, durations as integer or string") {
  auto rule = rule_from_json(parse(R"({
      "version": 3,
      "access": {"inbound_from": ["ag2:*:*"], "channel_types": {"accept": []}},
      "limits": {"channel_ttl_default": 90, "task_ttl_default": "1d",
                 "rate": {"per_minute": 60}, "inbox": {"high_water": 7,
                 "overflow": "drop_oldest"}, "delegation_depth": 0}})"));
  REQUIRE(rule.has_value());
  CHECK(rule->access.inbound_from == std::vector<std::string>{"ag2:*:*"});
  CHECK(rule->access.outbound_to == std::vector<std::string>{"*"});
  CHECK(rule->access.initiate_types == std::vector<std::string>{"*"});
  CHECK(rule->access.accept_types.empty());
  CHECK(std::get<std::int64_t>(rule->limits.channel_ttl_default) == 90);
  CHECK(std::get<std::string>(rule->limits.task_ttl_default) == "1d");
  CHECK(rule->limits.rate_per_minute == 60);
  CHECK(rule->limits.rate_burst == 0);
  CHECK(rule->limits.inbox_max_pending == 1000);
  CHECK(rule->limits.inbox_high_water == 7);
  CHECK(rule->limits.delegation_depth == 0);
  const Json encoded = to_json(*rule);
  CHECK(encoded["limits"]["channel_ttl_default"] == 90);
  CHECK(encoded["limits"]["task_ttl_default"] == "1d");
  auto again = rule_from_json(encoded);
  REQUIRE(again.has_value());
  CHECK(to_json(*again) == encoded);
}

TEST_CASE("rule parsing is strict") {
  CHECK(error_of(rule_from_json(parse(R"({"transforms": []})"))) ==
        "rule has unknown key 'transforms'");
  CHECK(error_of(rule_from_json(
            parse(R"({"access": {"channel_types": {"join": []}}})"))) ==
        "rule.access.channel_types has unknown key 'join'");
  CHECK(error_of(rule_from_json(
            parse(R"({"limits": {"rate": {"per_hour": 1}}})"))) ==
        "rule.limits.rate has unknown key 'per_hour'");
  CHECK(error_of(rule_from_json(
            parse(R"({"limits": {"inbox": {"max_pending": "10"}}})"))) ==
        "rule.limits.inbox field 'max_pending' must be an integer");
  CHECK(error_of(rule_from_json(
            parse(R"({"limits": {"channel_ttl_default": 1.5}})"))) ==
        "rule.limits field 'channel_ttl_default' must be an integer or a "
        "string");
  CHECK(error_of(rule_from_json(parse(R"({"access": ["*"]})"))) ==
        "rule field 'access' must be a JSON object");
  CHECK(
      error_of(rule_from_json(parse(R"({"access": {"outbound_to": "*"}})"))) ==
      "rule.access field 'outbound_to' must be a list of strings");
}

// --- Channel manifest and metadata -----------------------------------------

TEST_CASE("channel metadata equals AG2's create_channel result, keys sorted") {
  ChannelMetadata m;
  m.channel_id = "18ea4181306718f9aa17f3abac999c99";
  m.manifest = conversation_manifest();
  m.creator_id = "18ea41813017e1414aa2443b631c31ef";
  m.participants = {{"18ea41813017e1414aa2443b631c31ef", "initiator", 0,
                     "2026-01-01T00:00:00+00:00"},
                    {"18ea41813047f8cf42fd32a8ed7f44cd", "respondent", 1,
                     "2026-01-01T00:00:00+00:00"}};
  m.state = ChannelState::kActive;
  m.created_at = "2026-01-01T00:00:00+00:00";
  m.expires_at = "2026-01-01T02:00:00+00:00";
  CHECK(dump_python(to_json(m)) == kCreateChannelResult);
}

TEST_CASE("channel metadata equals AG2's metadata.json in declaration order") {
  auto metadata = channel_metadata_from_json(parse(kStoreMetadata));
  REQUIRE(metadata.has_value());
  CHECK(metadata->state == ChannelState::kActive);
  CHECK(metadata->participants.size() == 2);
  CHECK(dump_python(to_ordered_json(*metadata)) == kStoreMetadata);
}

TEST_CASE("workflow metadata with knobs re-encodes byte for byte") {
  auto metadata = channel_metadata_from_json(parse(kWorkflowMetadata));
  REQUIRE(metadata.has_value());
  CHECK_FALSE(metadata->manifest.participants.max.has_value());
  REQUIRE(metadata->manifest.knobs_schema.size() == 1);
  CHECK(metadata->manifest.knobs_schema[0].second == "TransitionGraph");
  CHECK(dump_python(to_json(*metadata)) == kWorkflowMetadata);
}

TEST_CASE("manifest defaults follow AG2") {
  auto manifest = channel_manifest_from_json(parse(R"({"type": "custom"})"));
  REQUIRE(manifest.has_value());
  CHECK(dump_python(to_ordered_json(*manifest)) ==
        R"({"type": "custom", "version": 1, "participants": {"min": 2, )"
        R"("max": null, "roles": []}, "knobs_schema": {}, )"
        R"("default_view_policy": "full_transcript", "expectations": []})");
  auto with_expectation = channel_manifest_from_json(parse(R"({
      "type": "custom", "expectations": [{"name": "reply_within",
      "on_violation": "auto_close", "applies_to": ["respondent"]}]})"));
  REQUIRE(with_expectation.has_value());
  CHECK(to_json(*with_expectation)["expectations"][0] ==
        parse(R"({"name": "reply_within", "on_violation": "auto_close",
                  "params": {}, "applies_to": ["respondent"]})"));
}

TEST_CASE("manifest parsing is strict") {
  CHECK(error_of(channel_manifest_from_json(parse(R"({"version": 1})"))) ==
        "manifest is missing required key 'type'");
  CHECK(error_of(channel_manifest_from_json(
            parse(R"({"type": "t", "allowed_events": []})"))) ==
        "manifest has unknown key 'allowed_events'");
  CHECK(error_of(channel_manifest_from_json(
            parse(R"({"type": "t", "participants": {"max": 2}})"))) ==
        "manifest.participants is missing required key 'min'");
  CHECK(error_of(channel_manifest_from_json(parse(
            R"({"type": "t", "expectations": [{"name": "max_silence"}]})"))) ==
        "manifest.expectations[0] is missing required key 'on_violation'");
  CHECK(error_of(channel_manifest_from_json(
            parse(R"({"type": "t", "knobs_schema": {"graph": 1}})"))) ==
        "manifest.knobs_schema field 'graph' must be a string");
  CHECK(error_of(channel_manifest_from_json(parse(
            R"({"type": "t", "expectations": [{"name": "n",
                "on_violation": "audit", "applies_to": "all"}]})"))) ==
        "manifest.expectations[0] field 'applies_to' must be a list of "
        "strings or null");
  CHECK(error_of(channel_manifest_from_json(
            parse(R"({"type": "t", "version": "1"})"))) ==
        "manifest field 'version' must be an integer");
}

TEST_CASE("channel metadata parsing is strict") {
  Json bad_state = parse(kStoreMetadata);
  bad_state["state"] = "open";
  CHECK(error_of(channel_metadata_from_json(bad_state)) ==
        "'open' is not a valid ChannelState");
  Json bad_role = parse(kStoreMetadata);
  bad_role["participants"][1]["role"] = "guest";
  CHECK(error_of(channel_metadata_from_json(bad_role)) ==
        "'guest' is not a valid ParticipantRole");
  Json extra = parse(kStoreMetadata);
  extra["sequence"] = 1;
  CHECK(error_of(channel_metadata_from_json(extra)) ==
        "metadata has unknown key 'sequence'");
  Json missing = parse(kStoreMetadata);
  missing.erase("creator_id");
  CHECK(error_of(channel_metadata_from_json(missing)) ==
        "metadata is missing required key 'creator_id'");
}

// --- dump_python -----------------------------------------------------------

TEST_CASE("dump_python matches Python's json.dumps") {
  CHECK(dump_python(parse(R"({"b": [1, 2.5, null, true], "a": {}})")) ==
        R"({"a": {}, "b": [1, 2.5, null, true]})");
  CHECK(dump_python(Json("caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\"\n\x7f")) ==
        R"("caf\u00e9 \ud83d\ude00 \"q\"\n\u007f")");
  CHECK(dump_python(Json(1e15)) == "1000000000000000.0");
  CHECK(dump_python(Json(-1.5e15)) == "-1500000000000000.0");
  CHECK(dump_python(Json(1e16)) == "1e+16");
  CHECK(dump_python(Json(1e-05)) == "1e-05");
  CHECK(dump_python(Json(0.0001)) == "0.0001");
  CHECK(dump_python(Json(3.0)) == "3.0");
  CHECK(dump_python(Json(0.1)) == "0.1");
  CHECK(dump_python(Json(0.0)) == "0.0");
  CHECK(dump_python(Json(-0.0)) == "-0.0");
  CHECK(dump_python(Json(5e-324)) == "5e-324");
  // Values where nlohmann's Grisu2 digits are not Python's shortest/closest.
  CHECK(dump_python(Json(1151485508009459.8)) == "1151485508009459.8");
  CHECK(dump_python(Json(1.894485301614417e+16)) == "1.894485301614417e+16");
  CHECK(dump_python(Json(-3.0832056803172083e+197)) ==
        "-3.0832056803172083e+197");
  CHECK(dump_python(Json(std::numeric_limits<double>::quiet_NaN())) == "NaN");
  CHECK(dump_python(Json(-std::numeric_limits<double>::infinity())) ==
        "-Infinity");
  CHECK(dump_python(Json(std::numeric_limits<std::uint64_t>::max())) ==
        "18446744073709551615");
}

// The plain run is found 16 bytes at a time, a text's last bytes in one
// block that overlaps the last one checked and a text shorter than a block
// in one padded block: each character that needs escaping is escaped
// wherever it falls, in texts of every length around those blocks.
TEST_CASE("python strings escape a character at every offset of every length") {
  const std::pair<std::string_view, std::string_view> escapes[] = {
      {std::string_view("\0", 1), "\\u0000"},
      {"\x1f", "\\u001f"},
      {"\n", "\\n"},
      {"\"", "\\\""},
      {"\\", "\\\\"},
      {"\x7f", "\\u007f"},
      {"\xc3\xa9", "\\u00e9"},                 // é
      {"\xf0\x9f\x98\x80", "\\ud83d\\ude00"},  // an emoji, a surrogate pair
      {"\xff", "\\udcff"},                     // a byte that starts no UTF-8
  };
  for (std::size_t plain = 0; plain <= 40; ++plain) {
    std::string out;
    append_python_string(std::string(plain, 'p'), out);
    CHECK(out == "\"" + std::string(plain, 'p') + "\"");
    for (const auto& escape : escapes) {
      for (std::size_t before = 0; before <= plain; ++before) {
        const std::string head(before, 'a');
        const std::string tail(plain - before, 'b');
        out.clear();
        append_python_string(head + std::string(escape.first) + tail, out);
        CHECK(out == "\"" + head + std::string(escape.second) + tail + "\"");
      }
    }
  }
  // Bytes next to the thresholds that need no escape stay as they are.
  std::string out;
  append_python_string(" ~ !#[]}{ ~ !#[]}{ ~", out);
  CHECK(out == "\" ~ !#[]}{ ~ !#[]}{ ~\"");
}

}  // namespace
}  // namespace parley::engine
