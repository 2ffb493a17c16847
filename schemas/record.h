// Building, verifying and stamping log records (schemas/log.fbs).
//
// A record is one finished FlatBuffer whose root is `parley.schema.Record`.
// Records travel as `std::string_view` byte strings; this header keeps the
// generated FlatBuffers code out of its includers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace parley::schema {

// The newest `Record.schema_version` this build writes and reads. Every
// record is written with it; a reader refuses records of a newer version.
// 2: one record kind per agent mutation (ResumeSet, RuleSet, SkillSet,
// ObservationRecorded) in place of AgentUpdated, which is still read.
// 3: `Record.checksum` (schemas/record_checksum.h) in every record.
inline constexpr std::uint16_t kSchemaVersion = 3;

// The sequences the log stamped into a record.
struct RecordSequences {
  std::uint64_t log_sequence = 0;
  std::uint64_t channel_sequence = 0;
};

// FlatBuffers reads scalars in place, so a record must start on an address
// aligned to its widest scalar. Storage engines (RocksDB) hand out values at
// any address.
inline constexpr std::size_t kRecordAlignment = 8;

// `record` itself when it starts on a kRecordAlignment boundary, else a copy
// of it held in `scratch` (valid until `scratch` is next used).
std::string_view aligned_record(std::string_view record,
                                std::vector<std::uint64_t>& scratch);

// Why verify_record refused a byte string.
struct RecordFault {
  enum class Kind {
    kMalformed,         // fails the FlatBuffers Verifier
    kChecksumMismatch,  // the bytes differ from those the checksum covered
    kNoChecksum,        // schema 3 or newer without a checksum field
    kNewerSchema,       // a schema version newer than kSchemaVersion
  };
  Kind kind = Kind::kMalformed;
  std::uint16_t schema_version = 0;  // kNoChecksum, kNewerSchema
  std::uint64_t stored = 0;          // kChecksumMismatch
  std::uint64_t computed = 0;        // kChecksumMismatch

  // E.g. "checksum mismatch (stored 0x…, computed 0x…): the record's 312
  // bytes are damaged".
  std::string describe(std::size_t record_bytes) const;
};

// Runs the FlatBuffers Verifier over `record` (file identifier, every
// table, nested FlexBuffers, and what flatbuffers 2.0.8 misses: that each
// FlexBuffer key ends within its buffer, schemas/flex_keys.h), then checks
// its checksum and its schema version. Returns the stamped sequences. Never
// reads outside `record`; `record` may start at any address.
//
// The checksum is checked whenever the record has the field, whatever its
// schema version says, so damage to the version itself is caught; a record
// of schema 3 or newer without the field is refused. Records of schema 1
// and 2 carry none and pass on the Verifier alone.
std::expected<RecordSequences, RecordFault> verify_record(
    std::string_view record);

// Writes the sequences into a record built by this header's builders, then
// its checksum over them (when it has the field: schema 3 on). Returns
// false when `record` lacks the sequence fields. `record` must already
// have passed verify_record.
bool stamp_sequences(std::span<char> record, RecordSequences sequences);
// stamp_sequences in two steps: the sequences alone (the record fails
// verify_record until its checksum is stamped), and then the checksum over
// them, changing nothing in a record of schema 1 or 2.
bool write_sequences(std::span<char> record, RecordSequences sequences);
void stamp_record_checksum(std::span<char> record);
// Whether stamp_sequences can write `record`'s sequences (it holds both
// fields), changing nothing. `record` must already have passed
// verify_record.
bool has_sequence_fields(std::string_view record);

// The fields of an AG2 envelope as views into caller memory.
// nullopt is JSON null; `audience` nullopt (broadcast) is distinct from an
// empty list (nobody).
struct EnvelopeFields {
  std::string_view channel_id;
  std::string_view sender_id;
  std::optional<std::vector<std::string_view>> audience;
  std::string_view event_type;
  std::span<const std::uint8_t> event_data;  // a FlexBuffer, usually a map
  std::string_view envelope_id;
  std::optional<std::string_view> task_id;
  std::optional<std::string_view> causation_id;
  std::optional<std::string_view> trace_id;
  std::optional<std::string_view> priority;  // nullopt = "normal"
  std::int64_t depth = 0;
  std::optional<std::string_view> idempotency_key;
  std::string_view created_at;
  std::optional<std::int64_t> ttl_seconds;
  bool hub_authored = false;
};

// When a builder stamps a record's checksum.
enum class ChecksumStamp {
  kNow,  // as built: the record passes verify_record
  // Left zero for the log, which stamps it as it stamps the sequences
  // (stamp_sequences), so a record built to be appended at once is hashed
  // once, not twice. Until then the record fails verify_record.
  kWithSequences,
};

// Encodes one envelope as a finished Record with zero sequences (and, by
// `stamp`, the checksum over them), ready for LogStore::append (which
// stamps them).
std::string build_envelope_record(const EnvelopeFields& envelope,
                                  ChecksumStamp stamp = ChecksumStamp::kNow);

}  // namespace parley::schema
