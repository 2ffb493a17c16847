#include "replay/record_json.h"

#include <nlohmann/json.hpp>

#include "engine/base/flex_json.h"
#include "engine/json/records_json.h"
#include "engine/records/log_records.h"
#include "parley/schemas/log_generated.h"

namespace parley::replay {
namespace {

nlohmann::json text(const flatbuffers::String* value) {
  return value ? nlohmann::json(value->str()) : nlohmann::json();
}

nlohmann::json flex(const flatbuffers::Vector<std::uint8_t>* value) {
  if (!value || value->size() == 0) return nullptr;
  return engine::flex_to_json({value->data(), value->size()});
}

nlohmann::json strings(
    const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>*
        values) {
  if (!values) return nullptr;
  nlohmann::json out = nlohmann::json::array();
  for (const auto* value : *values) out.push_back(value->str());
  return out;
}

}  // namespace

std::string_view record_kind(std::string_view record) {
  return schema::EnumNameBody(schema::GetRecord(record.data())->body_type());
}

nlohmann::json record_to_json(std::uint64_t log_sequence,
                              std::string_view record) {
  const schema::Record* root = schema::GetRecord(record.data());
  nlohmann::json out{{"log_sequence", log_sequence},
                     {"kind", record_kind(record)},
                     {"schema_version", root->schema_version()}};
  switch (root->body_type()) {
    case schema::Body::Envelope: {
      out["channel_sequence"] = root->channel_sequence();
      out["hub_authored"] = root->body_as_Envelope()->hub_authored();
      auto envelope = engine::decode_envelope(record);
      out["envelope"] = envelope ? engine::to_json(*envelope) : nullptr;
      break;
    }
    case schema::Body::ChannelCreated: {
      const auto* created = root->body_as_ChannelCreated();
      out["channel_id"] = text(created->channel_id());
      out["metadata"] = flex(created->metadata());
      break;
    }
    case schema::Body::AgentRegistered: {
      const auto* registered = root->body_as_AgentRegistered();
      out["agent_id"] = text(registered->agent_id());
      out["passport"] = flex(registered->passport());
      out["resume"] = flex(registered->resume());
      out["rule"] = flex(registered->rule());
      out["skill_md"] = text(registered->skill_md());
      out["owners"] = strings(registered->owners());
      break;
    }
    case schema::Body::AgentUnregistered:
      out["agent_id"] = text(root->body_as_AgentUnregistered()->agent_id());
      break;
    case schema::Body::AgentUpdated: {
      const auto* updated = root->body_as_AgentUpdated();
      out["agent_id"] = text(updated->agent_id());
      out["what"] = text(updated->what());
      out["value"] = flex(updated->value());
      break;
    }
    case schema::Body::ResumeSet: {
      const auto* set = root->body_as_ResumeSet();
      out["agent_id"] = text(set->agent_id());
      out["resume"] = flex(set->resume());
      break;
    }
    case schema::Body::RuleSet: {
      const auto* set = root->body_as_RuleSet();
      out["agent_id"] = text(set->agent_id());
      out["rule"] = flex(set->rule());
      break;
    }
    case schema::Body::SkillSet: {
      const auto* set = root->body_as_SkillSet();
      out["agent_id"] = text(set->agent_id());
      out["skill_md"] = text(set->skill_md());
      break;
    }
    case schema::Body::ObservationRecorded: {
      const auto* observed = root->body_as_ObservationRecorded();
      out["agent_id"] = text(observed->agent_id());
      out["resume"] = flex(observed->resume());
      out["task_id"] = text(observed->task_id());
      break;
    }
    case schema::Body::TaskUpdated: {
      const auto* task = root->body_as_TaskUpdated();
      out["task_id"] = text(task->task_id());
      out["channel_id"] = text(task->channel_id());
      out["metadata"] = flex(task->metadata());
      break;
    }
    case schema::Body::TaskCheckpointed: {
      const auto* task = root->body_as_TaskCheckpointed();
      out["task_id"] = text(task->task_id());
      out["state"] = flex(task->state());
      break;
    }
    case schema::Body::CheckpointWritersClaimed: {
      const auto* claimed = root->body_as_CheckpointWritersClaimed();
      out["task_id"] = text(claimed->task_id());
      out["writers"] = strings(claimed->writers());
      break;
    }
    case schema::Body::CursorAdvanced: {
      const auto* cursor = root->body_as_CursorAdvanced();
      out["agent_id"] = text(cursor->agent_id());
      out["channel_id"] = text(cursor->channel_id());
      out["envelope_id"] = text(cursor->envelope_id());
      break;
    }
    case schema::Body::ExpectationFired: {
      const auto* fired = root->body_as_ExpectationFired();
      out["channel_id"] = text(fired->channel_id());
      out["expectation_index"] = fired->expectation_index();
      out["violator_id"] = text(fired->violator_id());
      out["at"] = text(fired->at());
      out["expectation"] = text(fired->expectation());
      out["on_violation"] = text(fired->on_violation());
      out["hides_violator"] = fired->hides_violator();
      break;
    }
    case schema::Body::AuditRecorded: {
      const auto* audit = root->body_as_AuditRecorded();
      out["audit_kind"] = text(audit->kind());
      out["record"] = flex(audit->record());
      break;
    }
    default:
      break;
  }
  return out;
}

}  // namespace parley::replay
