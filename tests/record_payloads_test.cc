// The typed codec of record payloads (engine/records/payloads.h): every
// payload round-trips, payloads written by format version 1 (through JSON)
// decode to the same records, free-form JSON comes back as nlohmann writes
// it, damage is named, and schema 1's AgentUpdated records still fold.
#include <doctest/doctest.h>
#include <flatbuffers/flexbuffers.h>

#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/adapters/builtin_adapters.h"
#include "engine/base/flex_json.h"
#include "engine/base/flex_text.h"
#include "engine/json/records_json.h"
#include "engine/json/task_json.h"
#include "engine/records/log_records.h"
#include "engine/records/payloads.h"
#include "engine/state/hub_state.h"
#include "parley/schemas/log_generated.h"
#include "schemas/record.h"
#include "schemas/record_builder.h"

namespace parley {
namespace {

using engine::FlexBytes;
using nlohmann::json;

engine::Passport full_passport() {
  engine::Passport passport;
  passport.name = "bob \"the\" builder é";
  passport.owner = "acme";
  passport.provider = "openai";
  passport.cost =
      R"({"input_per_mtok":2.5,"output_per_mtok":10,"latency_tier":"fast"})";
  passport.region = "eu";
  passport.auth.scheme = "hmac";
  passport.auth.issuer = "iss";
  passport.auth.claim = R"({"nested":{"list":[1,2.25,null,true,"x\n"]}})";
  passport.kind = "human";
  passport.version = 3;
  passport.agent_id = "a-1";
  passport.created_at = "2026-01-01T00:00:00+00:00";
  return passport;
}

engine::Resume full_resume() {
  engine::Resume resume;
  resume.claimed_capabilities = {"search", "write"};
  resume.domains = {"law"};
  resume.summary = "line one\nline two\ttab";
  resume.examples.push_back({.title = "t",
                             .outcome = "ok",
                             .task_id = "task-1",
                             .channel_id = std::nullopt,
                             .when = "yesterday",
                             .note = "n"});
  resume.observed["search"] = {.n = 4,
                               .completed = 2,
                               .failed = 1,
                               .expired = 1,
                               .p50_latency_ms = 1200.0};
  resume.observed["write"] = {.n = 1, .p50_latency_ms = 12.75};
  resume.observed["idle"] = {};
  resume.version = 7;
  resume.last_updated = "2026-01-02T00:00:00+00:00";
  return resume;
}

engine::Rule full_rule() {
  engine::Rule rule;
  rule.version = 4;
  rule.access.inbound_from = {"alice", "team-*"};
  rule.access.accept_types = {};
  rule.limits.max_concurrent_channels = 3;
  rule.limits.channel_ttl_default = std::int64_t{90};
  rule.limits.task_ttl_default = std::string("1h");
  rule.limits.rate_per_minute = 60;
  rule.limits.inbox_high_water = 10;
  return rule;
}

engine::ChannelMetadata full_metadata() {
  engine::ChannelMetadata metadata;
  metadata.channel_id = "c-1";
  metadata.manifest.type = "discussion";
  metadata.manifest.version = 2;
  metadata.manifest.participants = {.min = 2, .max = 5, .roles = {"a", "b"}};
  metadata.manifest.knobs_schema = {{"max_rounds", "int"}, {"topic", "str"}};
  metadata.manifest.expectations.push_back(
      {.name = "turn",
       .on_violation = "skip",
       .params = R"({"s":30})",
       .applies_to = R"(["participant"])"});
  metadata.manifest.expectations.push_back(
      {.name = "quiet", .on_violation = "close"});
  metadata.creator_id = "a-1";
  metadata.participants = {{"a-1", "initiator", 0, "t0"},
                           {"a-2", "participant", 1, "t1"}};
  metadata.state = engine::ChannelState::kActive;
  metadata.created_at = "t0";
  metadata.expires_at = "t9";
  metadata.close_reason = "";
  metadata.knobs = R"({"max_rounds":3,"ratio":0.1})";
  metadata.labels = R"({"team":"x"})";
  metadata.required_acks = 1;
  metadata.pending_acks = {"a-2"};
  return metadata;
}

engine::TaskMetadata full_task() {
  engine::TaskMetadata task;
  task.task_id = "task-1";
  task.owner_id = "a-1";
  task.spec = {.title = "t",
               .description = "d",
               .payload = R"({"k":[1,2]})",
               .capability = "search"};
  task.state = "running";
  task.created_at = "t0";
  task.started_at = "t1";
  task.progress = R"({"pct":0.5})";
  task.result = "1e+100";
  task.channel_id = "c-1";
  return task;
}

template <typename T>
T decoded(const engine::Result<T>& result) {
  REQUIRE_MESSAGE(result.has_value(),
                  (result ? std::string() : result.error().message));
  return *result;
}

FlexBytes encoded(const engine::Result<FlexBytes>& result) {
  REQUIRE(result.has_value());
  return *result;
}

// What format version 1 wrote: the record's JSON as a FlexBuffer.
template <typename T>
FlexBytes through_json(const T& record) {
  return engine::to_flex(engine::to_json(record)).value();
}

TEST_CASE("every record payload round-trips through its codec") {
  const auto passport = full_passport();
  CHECK(engine::to_json(decoded(engine::decode_passport(encoded(
            engine::encode_passport(passport))))) == engine::to_json(passport));
  const auto resume = full_resume();
  CHECK(engine::to_json(decoded(engine::decode_resume(encoded(
            engine::encode_resume(resume))))) == engine::to_json(resume));
  const auto rule = full_rule();
  CHECK(engine::to_json(decoded(engine::decode_rule(
            encoded(engine::encode_rule(rule))))) == engine::to_json(rule));
  const auto metadata = full_metadata();
  CHECK(engine::to_ordered_json(decoded(engine::decode_channel_metadata(
            encoded(engine::encode_channel_metadata(metadata))))) ==
        engine::to_ordered_json(metadata));
  const auto task = full_task();
  CHECK(engine::to_json(decoded(engine::decode_task(
            encoded(engine::encode_task(task))))) == engine::to_json(task));
}

TEST_CASE("payloads written through JSON by format version 1 decode alike") {
  CHECK(engine::to_ordered_json(decoded(engine::decode_passport(through_json(
            full_passport())))) == engine::to_ordered_json(full_passport()));
  CHECK(engine::to_json(decoded(engine::decode_resume(
            through_json(full_resume())))) == engine::to_json(full_resume()));
  CHECK(engine::to_json(decoded(engine::decode_rule(
            through_json(full_rule())))) == engine::to_json(full_rule()));
  // knobs_schema comes back in key order, as a fold of version 1 gave it.
  auto metadata = full_metadata();
  const auto folded =
      decoded(engine::decode_channel_metadata(through_json(metadata)));
  CHECK(engine::to_json(folded) == engine::to_json(metadata));
  CHECK(folded.knobs == metadata.knobs);
  const auto task = full_task();
  CHECK(engine::to_json(decoded(engine::decode_task(
            engine::to_flex(engine::to_json(task)).value()))) ==
        engine::to_json(task));
}

TEST_CASE("a passport's cost keeps AG2's declaration order") {
  const auto passport = decoded(engine::decode_passport(
      encoded(engine::encode_passport(full_passport()))));
  CHECK(passport.cost ==
        R"({"input_per_mtok":2.5,"output_per_mtok":10,"latency_tier":"fast"})");
}

TEST_CASE("free-form JSON comes back as nlohmann writes it") {
  for (const char* text :
       {R"({"b":1,"a":[true,false,null]})", "0.1", "1e-07", "0.0001", "1e+16",
        "1000000000000000.0", "123456789012345.67", "-0.0", "3.0", "1.5e+300",
        "5e-324", "2.5e-05", "-17", "18446744073709551615",
        R"("quote \" backslash \\ control \u0001 tab \t del \u007f é 😀")",
        R"({"z":{"y":[[],{}]},"":""})"}) {
    CAPTURE(text);
    const json value = json::parse(text);
    const FlexBytes flex = engine::to_flex(value).value();
    CHECK(engine::flex_to_json_text(
              flexbuffers::GetRoot(flex.data(), flex.size())) == value.dump());
  }
}

TEST_CASE("a double renders the same whatever was rendered before it") {
  // A short exponent after a long one ("3e+01" after "...e+300") once read
  // the earlier number's digits past the end of the shorter one. Any double
  // reads back exactly; one with few digits renders as nlohmann writes it
  // (for a few 17-digit values nlohmann's Grisu2 picks other digits than
  // the shortest round-trip ones that Python and Parley write).
  std::mt19937_64 random(20261126);
  auto render = [](double value) {
    const FlexBytes flex = engine::to_flex(json(value)).value();
    return engine::flex_to_json_text(
               flexbuffers::GetRoot(flex.data(), flex.size()))
        .value();
  };
  int wrong = 0;
  for (int i = 0; i < 20000 && wrong < 5; ++i) {
    const double any = std::bit_cast<double>(random());
    if (std::isfinite(any) && json::parse(render(any)).get<double>() != any) {
      CHECK(render(any) == json(any).dump());
      ++wrong;
    }
    const double short_one = static_cast<double>(random() % 100000) / 100;
    if (render(short_one) != json(short_one).dump()) {
      CHECK(render(short_one) == json(short_one).dump());
      ++wrong;
    }
  }
}

TEST_CASE("free-form JSON holding text that is not UTF-8 is refused") {
  for (const char* bad : {"\xff", "a\xc3", "\xed\xa0\x80"}) {
    flexbuffers::Builder as_value;
    as_value.Map([&] { as_value.String("k", bad); });
    as_value.Finish();
    flexbuffers::Builder as_key;
    as_key.Map([&] { as_key.Int(bad, 1); });
    as_key.Finish();
    for (const auto* builder : {&as_value, &as_key}) {
      const auto& buffer = builder->GetBuffer();
      CHECK_FALSE(engine::flex_to_json_text(
                      flexbuffers::GetRoot(buffer.data(), buffer.size()))
                      .has_value());
    }
  }
  // A record holding such text is undecodable, naming the field.
  json metadata = engine::to_json(full_metadata());
  metadata["labels"] = {{"team", "\xff"}};
  auto channel =
      engine::decode_channel_metadata(engine::to_flex(metadata).value());
  REQUIRE_FALSE(channel.has_value());
  CHECK(channel.error().kind == engine::ErrorKind::kStorage);
  CHECK(channel.error().message.ends_with(
      "field 'labels' must be JSON with UTF-8 text"));
}

TEST_CASE("an undecodable payload names the object and the field") {
  const FlexBytes name_not_text = engine::to_flex(json{{"name", 5}}).value();
  auto passport = engine::decode_passport(name_not_text);
  REQUIRE_FALSE(passport.has_value());
  CHECK(passport.error().kind == engine::ErrorKind::kStorage);
  CHECK(passport.error().message == "passport field 'name' must be a string");

  json metadata = engine::to_json(full_metadata());
  metadata["participants"][1].erase("role");
  auto channel =
      engine::decode_channel_metadata(engine::to_flex(metadata).value());
  REQUIRE_FALSE(channel.has_value());
  CHECK(channel.error().message ==
        "channel.participants[1] is missing required key 'role'");

  auto empty = engine::decode_task({});
  REQUIRE_FALSE(empty.has_value());
  CHECK(empty.error().message == "task is missing or not an object");
}

// A schema-1 AgentUpdated record, as format version 1 wrote it.
std::string agent_updated(std::string_view agent_id, std::string_view what,
                          const json& value) {
  flatbuffers::FlatBufferBuilder builder;
  auto id = builder.CreateString(agent_id);
  auto kind = builder.CreateString(what);
  auto payload = builder.CreateVector(engine::to_flex(value).value());
  auto body = schema::CreateAgentUpdated(builder, id, kind, payload);
  return schema::finish_record(builder, schema::Body::AgentUpdated,
                               body.Union());
}

TEST_CASE("schema 1's AgentUpdated records still fold") {
  engine::AdapterRegistry adapters;
  engine::HubState state(adapters);
  engine::AgentRecord agent{.passport = full_passport()};
  REQUIRE(state.apply(1, engine::agent_registered_record(agent)));

  engine::Resume resume = full_resume();
  REQUIRE(
      state.apply(2, agent_updated("a-1", "resume", engine::to_json(resume))));
  CHECK(engine::to_json(state.registry.find("a-1")->resume) ==
        engine::to_json(resume));

  REQUIRE(state.apply(
      3, agent_updated("a-1", "rule", engine::to_json(full_rule()))));
  CHECK(engine::to_json(state.registry.find("a-1")->rule) ==
        engine::to_json(full_rule()));

  REQUIRE(state.apply(4, agent_updated("a-1", "skill", "# Skill")));
  CHECK(state.registry.find("a-1")->skill_md == "# Skill");
  REQUIRE(state.apply(5, agent_updated("a-1", "skill", nullptr)));
  CHECK_FALSE(state.registry.find("a-1")->skill_md.has_value());

  resume.summary = "after the task";
  REQUIRE(state.apply(6, agent_updated("a-1", "observation",
                                       {{"resume", engine::to_json(resume)},
                                        {"task_id", "task-9"}})));
  CHECK(state.registry.find("a-1")->resume.summary == "after the task");
  CHECK(state.registry.find("a-1")->observed_tasks.contains("task-9"));

  auto unknown = state.apply(7, agent_updated("a-1", "mood", "happy"));
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message ==
        "corruption: log record 7 holds an unreadable agent update: mood");
}

TEST_CASE("schema 2 writes one record kind per agent mutation, and folds it") {
  engine::AdapterRegistry adapters;
  engine::HubState state(adapters);
  engine::AgentRecord agent{.passport = full_passport()};
  REQUIRE(state.apply(1, engine::agent_registered_record(agent)));
  auto kind_of = [](const std::string& record) {
    return schema::GetRecord(record.data())->body_type();
  };

  const std::string resume = engine::resume_set_record("a-1", full_resume());
  CHECK(kind_of(resume) == schema::Body::ResumeSet);
  REQUIRE(state.apply(2, resume));
  CHECK(state.registry.find("a-1")->resume.summary == full_resume().summary);

  const std::string rule = engine::rule_set_record("a-1", full_rule());
  CHECK(kind_of(rule) == schema::Body::RuleSet);
  REQUIRE(state.apply(3, rule));
  CHECK(state.registry.find("a-1")->rule.limits.inbox_high_water == 10);

  const std::string skill = engine::skill_set_record("a-1", "# Skill");
  CHECK(kind_of(skill) == schema::Body::SkillSet);
  REQUIRE(state.apply(4, skill));
  CHECK(state.registry.find("a-1")->skill_md == "# Skill");

  const std::string observed =
      engine::observation_record("a-1", full_resume(), "task-3");
  CHECK(kind_of(observed) == schema::Body::ObservationRecorded);
  REQUIRE(state.apply(5, observed));
  CHECK(state.registry.find("a-1")->observed_tasks.contains("task-3"));
  CHECK(schema::GetRecord(observed.data())->schema_version() ==
        schema::kSchemaVersion);
}

}  // namespace
}  // namespace parley
