// The FlexBuffer payloads of log records, encoded from and decoded into the
// engine's typed records: a passport, resume or rule (AgentRegistered,
// ResumeSet, RuleSet, ObservationRecorded), channel metadata
// (ChannelCreated) and a task (TaskUpdated). This is the only codec of
// those payloads: the fold, the hub and the log tools all use it.
//
// Layout: one map per object, with AG2's keys and value types (strings,
// integers, null for an absent optional, lists, nested maps); free-form
// JsonText fields are stored as the JSON value they hold. Every key is
// written. Reading is strict (engine/records/payload_fields.h): an
// undecodable payload fails with kStorage naming the object and field.
#pragma once

#include <flatbuffers/flexbuffers.h>

#include <cstdint>
#include <span>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/channels/channel.h"
#include "engine/registry/identity.h"
#include "engine/tasks/task.h"

namespace parley::engine {

// Encoders fail with kInvalid only when a JsonText field cannot be stored
// (an object key containing NUL, or nesting too deep); JsonText is
// validated where it enters the engine, so for records the hub built they
// do not fail.
Result<FlexBytes> encode_passport(const Passport& passport);
Result<FlexBytes> encode_resume(const Resume& resume);
Result<FlexBytes> encode_rule(const Rule& rule);
Result<FlexBytes> encode_channel_metadata(const ChannelMetadata& metadata);
Result<FlexBytes> encode_task(const TaskMetadata& task);

// `payload` is verified FlexBuffer data.
Result<Passport> decode_passport(std::span<const std::uint8_t> payload);
Result<Resume> decode_resume(std::span<const std::uint8_t> payload);
// A resume map inside a larger payload.
Result<Resume> decode_resume(flexbuffers::Reference payload);
Result<Rule> decode_rule(std::span<const std::uint8_t> payload);
Result<ChannelMetadata> decode_channel_metadata(
    std::span<const std::uint8_t> payload);
Result<TaskMetadata> decode_task(std::span<const std::uint8_t> payload);

}  // namespace parley::engine
