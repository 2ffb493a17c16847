// Every log record kind as one JSON object, for `parley log dump`: stable
// keys (sorted), AG2's shapes for the AG2 payloads inside.
//
//   {"log_sequence": N, "kind": "<Body name>", "schema_version": V, ...}
// and per kind:
//   Envelope          "channel_sequence", "hub_authored", "envelope" (AG2
//                     envelope JSON)
//   ChannelCreated    "channel_id", "metadata" (AG2 metadata at creation)
//   AgentRegistered   "agent_id", "passport", "resume", "rule", "skill_md",
//                     "owners" (a remote_agent's owners, else null)
//   AgentUnregistered "agent_id"
//   AgentUpdated      "agent_id", "what", "value" (schema 1 only)
//   ResumeSet         "agent_id", "resume"
//   RuleSet           "agent_id", "rule"
//   SkillSet          "agent_id", "skill_md" (null: removed)
//   ObservationRecorded "agent_id", "resume", "task_id"
//   TaskUpdated       "task_id", "channel_id", "metadata"
//   TaskCheckpointed  "task_id", "state"
//   CheckpointWritersClaimed "task_id", "writers" (sorted agent ids)
//   CursorAdvanced    "agent_id", "channel_id", "envelope_id"
//   ExpectationFired  "channel_id", "expectation_index", "violator_id", "at"
//   AuditRecorded     "audit_kind", "record" (the AG2 audit object)
// Absent optional fields are null. Callers include nlohmann/json.hpp to
// use the result.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string_view>

namespace parley::replay {

// `record` must have passed the FlatBuffers Verifier (every LogStore read
// does that) and start on an 8-byte boundary.
nlohmann::json record_to_json(std::uint64_t log_sequence,
                              std::string_view record);

// The record's kind, e.g. "Envelope", "ChannelCreated".
std::string_view record_kind(std::string_view record);

}  // namespace parley::replay
