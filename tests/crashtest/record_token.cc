#include "tests/crashtest/record_token.h"

#include <nlohmann/json.hpp>

#include "replay/record_json.h"

namespace parley::crashtest {

namespace {

using nlohmann::json;

std::string text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump();
}

std::string field(const json& object, std::string_view key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it == object.end() ? std::string() : text(*it);
}

// The last inbound_from pattern of a rule (each set_rule appends a new one).
std::string last_inbound(const json& rule) {
  const json* patterns = nullptr;
  if (rule.is_object() && rule.contains("access") &&
      rule["access"].is_object() && rule["access"].contains("inbound_from")) {
    patterns = &rule["access"]["inbound_from"];
  }
  return patterns && patterns->is_array() && !patterns->empty()
             ? text(patterns->back())
             : std::string();
}

}  // namespace

std::string record_token(std::uint64_t log_sequence, std::string_view record) {
  const json r = replay::record_to_json(log_sequence, record);
  const std::string kind = r["kind"].get<std::string>();
  if (kind == "Envelope") {
    const json& envelope = r["envelope"];
    const std::string type = field(envelope, "event_type");
    if (r["hub_authored"] == true && type == "ag2.channel.closed") {
      return "closed:" + field(envelope, "channel_id");
    }
    if (r["hub_authored"] == true && type == "ag2.channel.expired") {
      return "expired:" + field(envelope, "channel_id");
    }
    return "env:" + field(envelope, "envelope_id");
  }
  if (kind == "ChannelCreated") return "chan:" + field(r, "channel_id");
  if (kind == "AgentRegistered") return "reg:" + field(r, "agent_id");
  if (kind == "AgentUnregistered") return "unreg:" + field(r, "agent_id");
  if (kind == "ResumeSet") {
    return "upd:" + field(r, "agent_id") +
           ":resume:" + field(r["resume"], "summary");
  }
  if (kind == "RuleSet") {
    return "upd:" + field(r, "agent_id") + ":rule:" + last_inbound(r["rule"]);
  }
  if (kind == "SkillSet") {
    return "upd:" + field(r, "agent_id") + ":skill:" + text(r["skill_md"]);
  }
  if (kind == "ObservationRecorded") {
    return "upd:" + field(r, "agent_id") +
           ":observation:" + field(r, "task_id");
  }
  if (kind == "TaskUpdated") {
    const json& metadata = r["metadata"];
    const json progress = metadata.is_object() && metadata.contains("progress")
                              ? metadata["progress"]
                              : json();
    return "task:" + field(r, "task_id") + ":" + field(metadata, "state") +
           ":" + field(progress, "last");
  }
  if (kind == "TaskCheckpointed") {
    return "ckpt:" + field(r, "task_id") + ":" + field(r["state"], "tok");
  }
  if (kind == "CheckpointWritersClaimed") return "claim:" + field(r, "task_id");
  if (kind == "CursorAdvanced") {
    return "cursor:" + field(r, "agent_id") + ":" + field(r, "channel_id") +
           ":" + field(r, "envelope_id");
  }
  if (kind == "ExpectationFired") {
    return "fired:" + field(r, "channel_id") + ":" +
           field(r, "expectation_index") + ":" + field(r, "violator_id");
  }
  if (kind == "AuditRecorded") {
    return "audit:" + field(r, "audit_kind") + ":" + r["record"].dump();
  }
  return kind + ":" + r.dump();
}

bool token_is_unique(std::string_view token) {
  return !token.starts_with("audit:");
}

}  // namespace parley::crashtest
