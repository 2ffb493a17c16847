// `parley log dump` (replay::record_to_json) prints every field of every
// record kind: one record of each kind in schemas/log.fbs's Body union is
// rendered, and each field the schema declares (read from flatc's
// mini-reflection tables) must appear in its JSON.
#include <doctest/doctest.h>
#include <flatbuffers/minireflect.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "engine/base/flex_json.h"
#include "engine/json/records_json.h"
#include "engine/records/expectation_records.h"
#include "engine/records/log_records.h"
#include "engine/records/task_records.h"
#include "parley/schemas/log_generated.h"
#include "replay/record_json.h"
#include "schemas/record.h"
#include "schemas/record_builder.h"

namespace parley {
namespace {

using nlohmann::json;
using schema::Body;

std::string legacy_agent_updated() {
  flatbuffers::FlatBufferBuilder builder;
  auto id = builder.CreateString("a-1");
  auto what = builder.CreateString("skill");
  auto value = builder.CreateVector(engine::to_flex("# Skill").value());
  auto body = schema::CreateAgentUpdated(builder, id, what, value);
  return schema::finish_record(builder, Body::AgentUpdated, body.Union());
}

// One record of every kind.
std::map<Body, std::string> one_of_each_kind() {
  engine::Envelope envelope;
  envelope.channel_id = "c-1";
  envelope.sender_id = "a-1";
  envelope.event_type = "ag2.text";
  envelope.envelope_id = std::string(32, 'a');
  envelope.created_at = "t0";
  engine::ChannelMetadata metadata;
  metadata.channel_id = "c-1";
  metadata.manifest.type = "consulting";
  engine::AgentRecord agent;
  agent.passport.name = "bob";
  agent.passport.agent_id = "a-1";
  engine::TaskMetadata task;
  task.task_id = "task-1";
  task.owner_id = "a-1";
  const std::string writers[] = {"a-1"};
  return {
      {Body::Envelope, engine::envelope_record(envelope, false)},
      {Body::ChannelCreated, engine::channel_created_record(metadata)},
      {Body::AgentRegistered, engine::agent_registered_record(agent)},
      {Body::AgentUnregistered, engine::agent_unregistered_record("a-1")},
      {Body::AgentUpdated, legacy_agent_updated()},
      {Body::TaskUpdated, engine::task_updated_record(task).value()},
      {Body::TaskCheckpointed,
       engine::task_checkpointed_record("task-1", R"({"k":1})").value()},
      {Body::CursorAdvanced,
       engine::cursor_advanced_record("a-1", "c-1", envelope.envelope_id)},
      {Body::ExpectationFired,
       engine::expectation_fired_record({.channel_id = "c-1",
                                         .expectation = "turn_within",
                                         .on_violation = "hide",
                                         .violator = "a-1",
                                         .at = "t1",
                                         .hides_violator = true})},
      {Body::AuditRecorded,
       engine::audit_record("rule_set",
                            engine::to_flex({{"kind", "rule_set"}}).value())},
      {Body::CheckpointWritersClaimed,
       engine::checkpoint_writers_claimed_record("task-1", writers)},
      {Body::ResumeSet, engine::resume_set_record("a-1", {})},
      {Body::RuleSet, engine::rule_set_record("a-1", {})},
      {Body::SkillSet, engine::skill_set_record("a-1", "# Skill")},
      {Body::ObservationRecorded,
       engine::observation_record("a-1", {}, "task-1")},
  };
}

// The JSON key a schema field is printed under, where it is not its name.
std::string printed_as(Body kind, const std::string& field) {
  if (kind == Body::AuditRecorded && field == "kind") return "audit_kind";
  if (kind == Body::Envelope && field != "hub_authored") return "envelope";
  return field;
}

TEST_CASE("log dump prints every field of every record kind") {
  const auto records = one_of_each_kind();
  // Every kind of the union has a record above.
  const flatbuffers::TypeTable* body = schema::BodyTypeTable();
  REQUIRE(records.size() == body->num_elems - 1);  // 0 is NONE
  for (std::size_t i = 1; i < body->num_elems; ++i) {
    const auto kind = static_cast<Body>(i);
    CAPTURE(schema::EnumNameBody(kind));
    REQUIRE(records.contains(kind));
    const std::string& record = records.at(kind);
    const json printed = replay::record_to_json(1, record);
    CHECK(printed["kind"] == schema::EnumNameBody(kind));
    CHECK(printed["log_sequence"] == 1);
    CHECK(printed["schema_version"] == schema::kSchemaVersion);
    const flatbuffers::TypeTable* table =
        body->type_refs[body->type_codes[i].sequence_ref]();
    for (std::size_t f = 0; f < table->num_elems; ++f) {
      const std::string field = table->names[f];
      CAPTURE(field);
      CHECK(printed.contains(printed_as(kind, field)));
    }
  }
  // The envelope itself carries every AG2 field.
  const json envelope =
      replay::record_to_json(1, records.at(Body::Envelope))["envelope"];
  for (const char* field :
       {"channel_id", "sender_id", "audience", "event_type", "event_data",
        "envelope_id", "task_id", "causation_id", "trace_id", "priority",
        "depth", "idempotency_key", "created_at", "ttl_seconds"}) {
    CAPTURE(field);
    CHECK(envelope.contains(field));
  }
}

}  // namespace
}  // namespace parley

namespace parley {
namespace {

// Found by fuzz_records: a record whose text is not UTF-8 (damage a
// schema without checksums cannot catch) made `parley log dump` and the
// state hash throw from nlohmann::json::dump, ending the process. Its bad
// bytes now print as U+FFFD.
TEST_CASE("a record holding bytes that are not UTF-8 dumps them as U+FFFD") {
  flatbuffers::FlatBufferBuilder builder;
  auto id = builder.CreateString("a-\xff\xfe");
  auto body = schema::CreateAgentUnregistered(builder, id);
  const std::string record =
      schema::finish_record(builder, Body::AgentUnregistered, body.Union());
  const json value = replay::record_to_json(4, record);
  const std::string line = engine::dump_compact(value);
  const std::string agent_id = json::parse(line).at("agent_id");
  CHECK(agent_id.starts_with("a-\xef\xbf\xbd"));  // U+FFFD
  CHECK(agent_id.find('\xff') == std::string::npos);
}

}  // namespace
}  // namespace parley
