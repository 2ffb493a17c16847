#include "schemas/record.h"

#include <flatbuffers/flatbuffers.h>

#include <cstdio>
#include <cstring>

#include "parley/schemas/log_generated.h"
#include "schemas/flex_keys.h"
#include "schemas/record_builder.h"
#include "schemas/record_checksum.h"

namespace parley::schema {
namespace {

const std::uint8_t* bytes_of(std::string_view record) {
  return reinterpret_cast<const std::uint8_t*>(record.data());
}

std::string hex(std::uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx",
                static_cast<unsigned long long>(value));
  return text;
}

flatbuffers::Offset<flatbuffers::String> optional_string(
    flatbuffers::FlatBufferBuilder& builder,
    const std::optional<std::string_view>& value) {
  return value ? builder.CreateString(value->data(), value->size()) : 0;
}

}  // namespace

std::string_view aligned_record(std::string_view record,
                                std::vector<std::uint64_t>& scratch) {
  if (reinterpret_cast<std::uintptr_t>(record.data()) % kRecordAlignment == 0) {
    return record;
  }
  scratch.resize((record.size() + sizeof(std::uint64_t) - 1) /
                 sizeof(std::uint64_t));
  std::memcpy(scratch.data(), record.data(), record.size());
  return {reinterpret_cast<const char*>(scratch.data()), record.size()};
}

std::string RecordFault::describe(std::size_t record_bytes) const {
  const std::string bytes = std::to_string(record_bytes) + " bytes";
  switch (kind) {
    case Kind::kMalformed:
      return "record fails FlatBuffers verification (" + bytes + ")";
    case Kind::kChecksumMismatch:
      return "checksum mismatch (stored " + hex(stored) + ", computed " +
             hex(computed) + "): the record's " + bytes + " are damaged";
    case Kind::kNoChecksum:
      return "record of schema version " + std::to_string(schema_version) +
             " carries no checksum (" + bytes + ")";
    case Kind::kNewerSchema:
      return "record of schema version " + std::to_string(schema_version) +
             ", newer than the " + std::to_string(kSchemaVersion) +
             " this build reads";
  }
  return "invalid record";
}

std::expected<RecordSequences, RecordFault> verify_record(
    std::string_view record) {
  thread_local std::vector<std::uint64_t> scratch;
  record = aligned_record(record, scratch);
  flatbuffers::Verifier verifier(bytes_of(record), record.size());
  if (!VerifyRecordBuffer(verifier)) return std::unexpected(RecordFault{});
  const Record* root = GetRecord(record.data());
  if (!flex_keys_terminated(*root)) return std::unexpected(RecordFault{});
  if (auto at = record_checksum_offset(record)) {
    const std::uint64_t stored = stored_checksum(record, *at);
    const std::uint64_t computed = record_checksum(record, *at);
    if (stored != computed) {
      return std::unexpected(
          RecordFault{.kind = RecordFault::Kind::kChecksumMismatch,
                      .stored = stored,
                      .computed = computed});
    }
  } else if (root->schema_version() >= kFirstChecksummedSchema) {
    return std::unexpected(
        RecordFault{.kind = RecordFault::Kind::kNoChecksum,
                    .schema_version = root->schema_version()});
  }
  if (root->schema_version() > kSchemaVersion) {
    return std::unexpected(
        RecordFault{.kind = RecordFault::Kind::kNewerSchema,
                    .schema_version = root->schema_version()});
  }
  return RecordSequences{root->log_sequence(), root->channel_sequence()};
}

bool write_sequences(std::span<char> record, RecordSequences sequences) {
  Record* root = GetMutableRecord(record.data());
  return root->mutate_log_sequence(sequences.log_sequence) &&
         root->mutate_channel_sequence(sequences.channel_sequence);
}

void stamp_record_checksum(std::span<char> record) {
  const std::string_view bytes(record.data(), record.size());
  if (auto at = record_checksum_offset(bytes)) stamp_checksum(record, *at);
}

bool stamp_sequences(std::span<char> record, RecordSequences sequences) {
  if (!write_sequences(record, sequences)) return false;
  stamp_record_checksum(record);
  return true;
}

bool has_sequence_fields(std::string_view record) {
  const auto* table = flatbuffers::GetRoot<flatbuffers::Table>(record.data());
  return table->GetOptionalFieldOffset(Record::VT_LOG_SEQUENCE) != 0 &&
         table->GetOptionalFieldOffset(Record::VT_CHANNEL_SEQUENCE) != 0;
}

std::string build_envelope_record(const EnvelopeFields& envelope,
                                  ChecksumStamp stamp) {
  // Each thread builds its envelope records in one builder, so its buffer
  // is allocated once, not per record; a record larger than
  // kKeptBuilderBytes frees the buffer it grew after it is copied out.
  constexpr flatbuffers::uoffset_t kKeptBuilderBytes = 64 << 10;
  thread_local flatbuffers::FlatBufferBuilder builder(4096);
  builder.Clear();
  builder.ForceDefaults(false);  // finish_record left it on
  auto string = [&](std::string_view value) {
    return builder.CreateString(value.data(), value.size());
  };
  flatbuffers::Offset<
      flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>
      audience = 0;
  if (envelope.audience) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> ids;
    ids.reserve(envelope.audience->size());
    for (std::string_view id : *envelope.audience) ids.push_back(string(id));
    audience = builder.CreateVector(ids);
  }
  auto channel_id = string(envelope.channel_id);
  auto sender_id = string(envelope.sender_id);
  auto event_type = string(envelope.event_type);
  auto event_data = builder.CreateVector(envelope.event_data.data(),
                                         envelope.event_data.size());
  auto envelope_id = string(envelope.envelope_id);
  auto task_id = optional_string(builder, envelope.task_id);
  auto causation_id = optional_string(builder, envelope.causation_id);
  auto trace_id = optional_string(builder, envelope.trace_id);
  auto priority = optional_string(builder, envelope.priority);
  auto idempotency_key = optional_string(builder, envelope.idempotency_key);
  auto created_at = string(envelope.created_at);
  auto table = CreateEnvelope(
      builder, channel_id, sender_id, audience, event_type, event_data,
      envelope_id, task_id, causation_id, trace_id, priority, envelope.depth,
      idempotency_key, created_at,
      envelope.ttl_seconds
          ? flatbuffers::Optional<std::int64_t>(*envelope.ttl_seconds)
          : flatbuffers::nullopt,
      envelope.hub_authored);
  std::string record =
      finish_record(builder, Body::Envelope, table.Union(), stamp);
  if (builder.GetSize() > kKeptBuilderBytes) builder.Reset();
  return record;
}

std::string finish_record(flatbuffers::FlatBufferBuilder& builder, Body type,
                          flatbuffers::Offset<void> body, ChecksumStamp stamp) {
  // The sequences are written even while zero so the log can stamp them.
  builder.ForceDefaults(true);
  auto root = CreateRecord(builder, kSchemaVersion, 0, 0, type, body, 0);
  FinishRecordBuffer(builder, root);
  std::string record(reinterpret_cast<const char*>(builder.GetBufferPointer()),
                     builder.GetSize());
  if (stamp == ChecksumStamp::kWithSequences) return record;
  if (auto at = record_checksum_offset(record)) stamp_checksum(record, *at);
  return record;
}

}  // namespace parley::schema
