// The crash campaign's name for one log record: a string that no other
// record of a correct log carries, so an acknowledged operation can be
// found in the log by scanning it, and a record written twice shows up as
// the same token twice.
//
//   Envelope                 env:<envelope_id>; the hub's own close and
//                            expiry: closed:<channel_id>, expired:<channel_id>
//                            (a channel ends once)
//   ChannelCreated           chan:<channel_id>
//   AgentRegistered          reg:<agent_id>
//   AgentUnregistered        unreg:<agent_id>
//   AgentUpdated             upd:<agent_id>:<what>:<mark>, mark = the
//                            resume's summary, the SKILL.md text, the
//                            rule's last inbound_from pattern, or the
//                            observation's task id
//   TaskUpdated              task:<task_id>:<state>:<progress.last>
//   TaskCheckpointed         ckpt:<task_id>:<state.tok>
//   CheckpointWritersClaimed claim:<task_id>
//   CursorAdvanced           cursor:<agent_id>:<channel_id>:<envelope_id>
//   ExpectationFired         fired:<channel_id>:<index>:<violator_id>
//   AuditRecorded            audit:<kind>:<the record, compact JSON>
//
// The campaign's driver puts the marks (summaries, texts, patterns,
// progress.last, state.tok) into every mutation it sends, each one unique.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace parley::crashtest {

// `record` has passed the FlatBuffers Verifier (every LogStore read checks
// that).
std::string record_token(std::uint64_t log_sequence, std::string_view record);

// Whether a correct log holds at most one record with `token`: every kind
// but audit records, whose content the hub chooses.
bool token_is_unique(std::string_view token);

}  // namespace parley::crashtest
