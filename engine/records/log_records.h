// The engine's log records (schemas/log.fbs): builders for every state
// change the hub writes, their payloads encoded by
// engine/records/payloads.h. Each returns a finished Record with zero
// sequences, ready for LogStore::append. The fold that reads them back is
// engine/state/hub_state.h.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/base/envelope.h"
#include "engine/channels/channel.h"
#include "engine/registry/registry.h"
#include "schemas/record.h"

namespace parley::engine {

std::string agent_registered_record(const AgentRecord& agent);
std::string agent_unregistered_record(std::string_view agent_id);
std::string resume_set_record(std::string_view agent_id, const Resume& resume);
std::string rule_set_record(std::string_view agent_id, const Rule& rule);
std::string skill_set_record(std::string_view agent_id,
                             const std::optional<std::string>& skill_md);
std::string observation_record(std::string_view agent_id, const Resume& resume,
                               const std::optional<std::string>& task_id);
std::string cursor_advanced_record(std::string_view agent_id,
                                   std::string_view channel_id,
                                   std::string_view envelope_id);
std::string channel_created_record(const ChannelMetadata& metadata);
// `hub_authored`: the hub itself wrote it (invite, opened, closed, expired).
std::string envelope_record(
    const Envelope& envelope, bool hub_authored,
    schema::ChecksumStamp stamp = schema::ChecksumStamp::kNow);
// `audit` is one AG2 audit JSON object ({"at", "kind", ...}) as a
// FlexBuffer, `kind` its "kind".
std::string audit_record(std::string_view kind,
                         std::span<const std::uint8_t> audit);

// The envelope in a verified Envelope record, its per-channel sequence
// included; nullopt when the record holds another kind.
std::optional<Envelope> decode_envelope(std::string_view record);

}  // namespace parley::engine
