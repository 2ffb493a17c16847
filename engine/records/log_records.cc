#include "engine/records/log_records.h"

#include "engine/records/payloads.h"
#include "schemas/record.h"
#include "schemas/record_builder.h"

namespace parley::engine {

namespace {

using flatbuffers::FlatBufferBuilder;

// A payload of a record the hub built from validated input: its JsonText
// fields were checked where they entered the engine, so encoding cannot
// fail (a failure is a bug and throws).
flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> payload(
    FlatBufferBuilder& builder, const Result<FlexBytes>& encoded) {
  return builder.CreateVector(encoded.value());
}

}  // namespace

std::string agent_registered_record(const AgentRecord& agent) {
  FlatBufferBuilder builder;
  auto id = builder.CreateString(agent.agent_id());
  auto passport = payload(builder, encode_passport(agent.passport));
  auto resume = payload(builder, encode_resume(agent.resume));
  auto rule = payload(builder, encode_rule(agent.rule));
  auto skill = agent.skill_md ? builder.CreateString(*agent.skill_md) : 0;
  auto owners = agent.owners.empty()
                    ? 0
                    : builder.CreateVectorOfStrings(agent.owners.begin(),
                                                    agent.owners.end());
  auto body = schema::CreateAgentRegistered(builder, id, passport, resume, rule,
                                            skill, owners);
  return schema::finish_record(builder, schema::Body::AgentRegistered,
                               body.Union());
}

std::string agent_unregistered_record(std::string_view agent_id) {
  FlatBufferBuilder builder;
  auto body =
      schema::CreateAgentUnregistered(builder, builder.CreateString(agent_id));
  return schema::finish_record(builder, schema::Body::AgentUnregistered,
                               body.Union());
}

std::string resume_set_record(std::string_view agent_id, const Resume& resume) {
  FlatBufferBuilder builder;
  auto id = builder.CreateString(agent_id);
  auto encoded = payload(builder, encode_resume(resume));
  auto body = schema::CreateResumeSet(builder, id, encoded);
  return schema::finish_record(builder, schema::Body::ResumeSet, body.Union());
}

std::string rule_set_record(std::string_view agent_id, const Rule& rule) {
  FlatBufferBuilder builder;
  auto id = builder.CreateString(agent_id);
  auto encoded = payload(builder, encode_rule(rule));
  auto body = schema::CreateRuleSet(builder, id, encoded);
  return schema::finish_record(builder, schema::Body::RuleSet, body.Union());
}

std::string skill_set_record(std::string_view agent_id,
                             const std::optional<std::string>& skill_md) {
  FlatBufferBuilder builder;
  auto id = builder.CreateString(agent_id);
  auto skill = skill_md ? builder.CreateString(*skill_md) : 0;
  auto body = schema::CreateSkillSet(builder, id, skill);
  return schema::finish_record(builder, schema::Body::SkillSet, body.Union());
}

std::string observation_record(std::string_view agent_id, const Resume& resume,
                               const std::optional<std::string>& task_id) {
  FlatBufferBuilder builder;
  auto id = builder.CreateString(agent_id);
  auto encoded = payload(builder, encode_resume(resume));
  auto task = task_id ? builder.CreateString(*task_id) : 0;
  auto body = schema::CreateObservationRecorded(builder, id, encoded, task);
  return schema::finish_record(builder, schema::Body::ObservationRecorded,
                               body.Union());
}

std::string cursor_advanced_record(std::string_view agent_id,
                                   std::string_view channel_id,
                                   std::string_view envelope_id) {
  FlatBufferBuilder builder;
  auto agent = builder.CreateString(agent_id);
  auto channel = builder.CreateString(channel_id);
  auto envelope = builder.CreateString(envelope_id);
  auto body = schema::CreateCursorAdvanced(builder, agent, channel, envelope);
  return schema::finish_record(builder, schema::Body::CursorAdvanced,
                               body.Union());
}

std::string channel_created_record(const ChannelMetadata& metadata) {
  FlatBufferBuilder builder;
  auto id = builder.CreateString(metadata.channel_id);
  auto encoded = payload(builder, encode_channel_metadata(metadata));
  auto body = schema::CreateChannelCreated(builder, id, encoded);
  return schema::finish_record(builder, schema::Body::ChannelCreated,
                               body.Union());
}

std::string envelope_record(const Envelope& envelope, bool hub_authored,
                            schema::ChecksumStamp stamp) {
  std::optional<std::vector<std::string_view>> audience;
  if (envelope.audience) {
    audience.emplace(envelope.audience->begin(), envelope.audience->end());
  }
  auto optional_view = [](const std::optional<std::string>& value) {
    return value ? std::optional<std::string_view>(*value) : std::nullopt;
  };
  return schema::build_envelope_record(
      {
          .channel_id = envelope.channel_id,
          .sender_id = envelope.sender_id,
          .audience = std::move(audience),
          .event_type = envelope.event_type,
          .event_data = envelope.event_data,
          .envelope_id = envelope.envelope_id,
          .task_id = optional_view(envelope.task_id),
          .causation_id = optional_view(envelope.causation_id),
          .trace_id = optional_view(envelope.trace_id),
          .priority = envelope.priority == "normal"
                          ? std::nullopt
                          : std::optional<std::string_view>(envelope.priority),
          .depth = envelope.depth,
          .idempotency_key = optional_view(envelope.idempotency_key),
          .created_at = envelope.created_at,
          .ttl_seconds = envelope.ttl_seconds,
          .hub_authored = hub_authored,
      },
      stamp);
}

std::string audit_record(std::string_view kind,
                         std::span<const std::uint8_t> audit) {
  FlatBufferBuilder builder;
  auto name = builder.CreateString(kind);
  auto payload = builder.CreateVector(audit.data(), audit.size());
  auto body = schema::CreateAuditRecorded(builder, name, payload);
  return schema::finish_record(builder, schema::Body::AuditRecorded,
                               body.Union());
}

std::optional<Envelope> decode_envelope(std::string_view record) {
  const schema::Record* root = schema::GetRecord(record.data());
  const schema::Envelope* logged = root->body_as_Envelope();
  if (!logged) return std::nullopt;
  auto text = [](const flatbuffers::String* value) {
    return value ? std::optional<std::string>(value->str()) : std::nullopt;
  };
  Envelope envelope;
  envelope.channel_id = logged->channel_id()->str();
  envelope.sender_id = logged->sender_id()->str();
  if (logged->audience()) {
    envelope.audience.emplace();
    for (const auto* id : *logged->audience()) {
      envelope.audience->push_back(id->str());
    }
  }
  envelope.event_type = logged->event_type()->str();
  envelope.event_data.assign(logged->event_data()->begin(),
                             logged->event_data()->end());
  envelope.envelope_id = logged->envelope_id()->str();
  envelope.task_id = text(logged->task_id());
  envelope.causation_id = text(logged->causation_id());
  envelope.trace_id = text(logged->trace_id());
  if (logged->priority()) envelope.priority = logged->priority()->str();
  envelope.depth = logged->depth();
  envelope.idempotency_key = text(logged->idempotency_key());
  envelope.created_at = logged->created_at()->str();
  if (logged->ttl_seconds()) envelope.ttl_seconds = *logged->ttl_seconds();
  envelope.sequence = root->channel_sequence();
  return envelope;
}

}  // namespace parley::engine
