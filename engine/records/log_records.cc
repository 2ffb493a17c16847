#include "engine/records/log_records.h"

#include <nlohmann/json.hpp>

#include "engine/base/flex_json.h"
#include "engine/json/records_json.h"
#include "schemas/record.h"
#include "schemas/record_builder.h"

namespace parley::engine {

namespace {

using flatbuffers::FlatBufferBuilder;

// JSON the engine built itself never has NUL keys, so to_flex cannot fail.
flatbuffers::Offset<flatbuffers::Vector<std::uint8_t>> flex(
    FlatBufferBuilder& builder, const nlohmann::json& value) {
  const FlexBytes bytes = to_flex(value).value();
  return builder.CreateVector(bytes);
}

std::string agent_updated(std::string_view agent_id, std::string_view what,
                          const nlohmann::json& value) {
  FlatBufferBuilder builder;
  auto id = builder.CreateString(agent_id);
  auto kind = builder.CreateString(what);
  auto payload = flex(builder, value);
  auto body = schema::CreateAgentUpdated(builder, id, kind, payload);
  return schema::finish_record(builder, schema::Body::AgentUpdated,
                               body.Union());
}

}  // namespace

std::string agent_registered_record(const AgentRecord& agent) {
  FlatBufferBuilder builder;
  auto id = builder.CreateString(agent.agent_id());
  auto passport = flex(builder, to_json(agent.passport));
  auto resume = flex(builder, to_json(agent.resume));
  auto rule = flex(builder, to_json(agent.rule));
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
  return agent_updated(agent_id, "resume", to_json(resume));
}

std::string rule_set_record(std::string_view agent_id, const Rule& rule) {
  return agent_updated(agent_id, "rule", to_json(rule));
}

std::string skill_set_record(std::string_view agent_id,
                             const std::optional<std::string>& skill_md) {
  return agent_updated(agent_id, "skill",
                       skill_md ? nlohmann::json(*skill_md) : nullptr);
}

std::string observation_record(std::string_view agent_id, const Resume& resume,
                               const std::optional<std::string>& task_id) {
  return agent_updated(
      agent_id, "observation",
      {{"resume", to_json(resume)},
       {"task_id", task_id ? nlohmann::json(*task_id) : nullptr}});
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
  auto payload = flex(builder, to_json(metadata));
  auto body = schema::CreateChannelCreated(builder, id, payload);
  return schema::finish_record(builder, schema::Body::ChannelCreated,
                               body.Union());
}

std::string envelope_record(const Envelope& envelope, bool hub_authored) {
  std::optional<std::vector<std::string_view>> audience;
  if (envelope.audience) {
    audience.emplace(envelope.audience->begin(), envelope.audience->end());
  }
  auto optional_view = [](const std::optional<std::string>& value) {
    return value ? std::optional<std::string_view>(*value) : std::nullopt;
  };
  return schema::build_envelope_record({
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
  });
}

std::string audit_record(const nlohmann::json& audit) {
  FlatBufferBuilder builder;
  auto name = builder.CreateString(audit.at("kind").get<std::string>());
  auto payload = flex(builder, audit);
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
