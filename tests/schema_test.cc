// The log record schema: what an envelope record keeps, and the Verifier.
#include <doctest/doctest.h>
#include <flatbuffers/flexbuffers.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <random>

#include "parley/schemas/log_generated.h"
#include "schemas/record.h"
#include "schemas/record_checksum.h"
#include "tests/test_support.h"

namespace parley {
namespace {

const schema::Envelope& envelope_of(const std::string& record) {
  REQUIRE(schema::verify_record(record).has_value());
  const schema::Envelope* envelope =
      schema::GetRecord(record.data())->body_as_Envelope();
  REQUIRE(envelope != nullptr);
  return *envelope;
}

schema::EnvelopeFields minimal_fields(std::span<const std::uint8_t> data) {
  return {.channel_id = "c",
          .sender_id = "s",
          .event_type = "ag2.msg.text",
          .event_data = data,
          .envelope_id = "e",
          .created_at = "2026-01-01T00:00:00+00:00"};
}

std::vector<std::uint8_t> empty_map() {
  flexbuffers::Builder data;
  data.Map([] {});
  data.Finish();
  return data.GetBuffer();
}

TEST_CASE("null audience and empty audience are distinguishable") {
  auto data = empty_map();
  schema::EnvelopeFields fields = minimal_fields(data);
  std::string broadcast = schema::build_envelope_record(fields);
  fields.audience.emplace();
  std::string nobody = schema::build_envelope_record(fields);
  fields.audience->push_back("a1");
  std::string one = schema::build_envelope_record(fields);

  CHECK(envelope_of(broadcast).audience() == nullptr);
  REQUIRE(envelope_of(nobody).audience() != nullptr);
  CHECK(envelope_of(nobody).audience()->size() == 0);
  REQUIRE(envelope_of(one).audience()->size() == 1);
  CHECK(envelope_of(one).audience()->Get(0)->str() == "a1");
}

TEST_CASE("absent optional envelope fields read as null") {
  auto data = empty_map();
  std::string record = schema::build_envelope_record(minimal_fields(data));
  const schema::Envelope& envelope = envelope_of(record);
  CHECK(envelope.task_id() == nullptr);
  CHECK(envelope.causation_id() == nullptr);
  CHECK(envelope.trace_id() == nullptr);
  CHECK(envelope.priority() == nullptr);
  CHECK(envelope.idempotency_key() == nullptr);
  CHECK_FALSE(envelope.ttl_seconds().has_value());
  CHECK(envelope.depth() == 0);
  CHECK_FALSE(envelope.hub_authored());
}

TEST_CASE("every envelope field round-trips") {
  flexbuffers::Builder data;
  data.Map([&] {
    data.String("text", "hello");
    data.Int("n", 7);
  });
  data.Finish();
  schema::EnvelopeFields fields = minimal_fields(data.GetBuffer());
  fields.audience = std::vector<std::string_view>{"a", "b"};
  fields.task_id = "t";
  fields.causation_id = "cause";
  fields.trace_id = "trace";
  fields.priority = "urgent";
  fields.depth = 3;
  fields.idempotency_key = "idem";
  fields.ttl_seconds = 0;
  fields.hub_authored = true;
  std::string record = schema::build_envelope_record(fields);
  const schema::Envelope& envelope = envelope_of(record);
  CHECK(envelope.channel_id()->str() == "c");
  CHECK(envelope.sender_id()->str() == "s");
  CHECK(envelope.event_type()->str() == "ag2.msg.text");
  CHECK(envelope.envelope_id()->str() == "e");
  CHECK(envelope.created_at()->str() == "2026-01-01T00:00:00+00:00");
  CHECK(envelope.task_id()->str() == "t");
  CHECK(envelope.causation_id()->str() == "cause");
  CHECK(envelope.trace_id()->str() == "trace");
  CHECK(envelope.priority()->str() == "urgent");
  CHECK(envelope.depth() == 3);
  CHECK(envelope.idempotency_key()->str() == "idem");
  REQUIRE(envelope.ttl_seconds().has_value());
  CHECK(*envelope.ttl_seconds() == 0);
  CHECK(envelope.hub_authored());
  auto map = envelope.event_data_flexbuffer_root().AsMap();
  CHECK(map["text"].AsString().str() == "hello");
  CHECK(map["n"].AsInt64() == 7);
}

TEST_CASE("a new record carries zero sequences that stamping replaces") {
  std::string record = testing::text_record("c", "x");
  auto before = schema::verify_record(record);
  REQUIRE(before.has_value());
  CHECK(before->log_sequence == 0);
  CHECK(before->channel_sequence == 0);
  REQUIRE(schema::stamp_sequences(record, {41, 7}));
  auto after = schema::verify_record(record);
  REQUIRE(after.has_value());
  CHECK(after->log_sequence == 41);
  CHECK(after->channel_sequence == 7);
  CHECK(testing::text_of(record) == "x");
}

TEST_CASE("a truncated record fails verification unless only padding went") {
  std::string record = testing::text_record("c", "some text to cut");
  for (std::size_t size = 0; size < record.size(); ++size) {
    INFO("cut to " << size << " of " << record.size() << " bytes");
    // A copy of exactly `size` bytes, so ASan sees any read past the end.
    std::string cut = record.substr(0, size);
    if (schema::verify_record(cut)) {
      // FlatBuffers may end in alignment padding nothing refers to.
      CHECK(record.size() - size < 8);
      CHECK(testing::text_of(cut) == "some text to cut");
    }
  }
}

TEST_CASE("random byte flips never crash the verifier") {
  std::uint32_t seed = std::random_device{}();
  INFO("seed " << seed);
  std::mt19937 random(seed);
  std::string record = testing::text_record("c", "payload");
  int refused = 0;
  for (int round = 0; round < 5000; ++round) {
    std::string damaged = record;
    std::uniform_int_distribution<std::size_t> at(0, damaged.size() - 1);
    for (int flips = 0; flips < 3; ++flips) {
      damaged[at(random)] ^= static_cast<char>(1 << (random() % 8));
    }
    if (auto stamped = schema::verify_record(damaged); !stamped) {
      ++refused;
    } else if (const auto* envelope =
                   schema::GetRecord(damaged.data())->body_as_Envelope()) {
      // Whatever verifies must be safe to read.
      (void)envelope->event_data_flexbuffer_root().ToString();
    }
  }
  CHECK(refused > 0);
}

TEST_CASE("a record at an unaligned address verifies through an aligned copy") {
  std::string record = testing::text_record("c", "x");
  std::string shifted = " " + record;
  std::string_view unaligned(shifted.data() + 1, record.size());
  std::vector<std::uint64_t> scratch;
  std::string_view aligned = schema::aligned_record(unaligned, scratch);
  CHECK(reinterpret_cast<std::uintptr_t>(aligned.data()) %
            schema::kRecordAlignment ==
        0);
  CHECK(aligned == record);
  CHECK(schema::verify_record(unaligned).has_value());
  CHECK(testing::text_of(aligned) == "x");
}

TEST_CASE("a record of a newer schema version is refused") {
  std::string record = testing::text_record("c", "x");
  schema::GetMutableRecord(record.data())
      ->mutate_schema_version(schema::kSchemaVersion + 1);
  REQUIRE(schema::stamp_sequences(record, {1, 1}));
  auto verified = schema::verify_record(record);
  REQUIRE_FALSE(verified.has_value());
  CHECK(verified.error().kind == schema::RecordFault::Kind::kNewerSchema);
  CHECK(verified.error().describe(record.size()) ==
        "record of schema version 4, newer than the 3 this build reads");
}

TEST_CASE("the checksum is XXH3-64 of the record without its own 8 bytes") {
  std::string record = testing::text_record("c", "checked");
  REQUIRE(schema::stamp_sequences(record, {12, 3}));
  auto at = schema::record_checksum_offset(record);
  REQUIRE(at.has_value());
  std::string covered = record.substr(0, *at) + record.substr(*at + 8);
  CHECK(schema::stored_checksum(record, *at) ==
        XXH3_64bits(covered.data(), covered.size()));
  CHECK(schema::GetRecord(record.data())->checksum() ==
        XXH3_64bits(covered.data(), covered.size()));
}

TEST_CASE("stamping the sequences stamps the checksum over them") {
  std::string record = testing::text_record("c", "x");
  const std::uint64_t unstamped = schema::GetRecord(record.data())->checksum();
  CHECK(schema::verify_record(record).has_value());
  REQUIRE(schema::stamp_sequences(record, {41, 7}));
  CHECK(schema::GetRecord(record.data())->checksum() != unstamped);
  CHECK(schema::verify_record(record).has_value());
  // Sequences written without the checksum are damage.
  schema::GetMutableRecord(record.data())->mutate_log_sequence(42);
  auto verified = schema::verify_record(record);
  REQUIRE_FALSE(verified.has_value());
  CHECK(verified.error().kind == schema::RecordFault::Kind::kChecksumMismatch);
}

TEST_CASE("a record built for the log gets its checksum with its sequences") {
  const std::vector<std::uint8_t> data = empty_map();
  const schema::EnvelopeFields fields = minimal_fields(data);
  std::string now = schema::build_envelope_record(fields);
  std::string later = schema::build_envelope_record(
      fields, schema::ChecksumStamp::kWithSequences);
  // Until the log stamps it, it is not a record anyone may take.
  auto unstamped = schema::verify_record(later);
  REQUIRE_FALSE(unstamped.has_value());
  CHECK(unstamped.error().kind == schema::RecordFault::Kind::kChecksumMismatch);
  REQUIRE(schema::stamp_sequences(now, {41, 7}));
  REQUIRE(schema::stamp_sequences(later, {41, 7}));
  CHECK(later == now);
  CHECK(schema::verify_record(later).has_value());
}

TEST_CASE("every single flipped byte of a stamped record is refused") {
  std::string record = testing::text_record("c", "a payload of some length");
  REQUIRE(schema::stamp_sequences(record, {5, 2}));
  int by_checksum = 0;
  for (std::size_t at = 0; at < record.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      INFO("byte " << at << " bit " << bit << " of " << record.size());
      std::string damaged = record;
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << bit));
      auto verified = schema::verify_record(damaged);
      REQUIRE_FALSE(verified.has_value());
      if (verified.error().kind ==
          schema::RecordFault::Kind::kChecksumMismatch) {
        ++by_checksum;
      }
    }
  }
  // Most flips leave a valid FlatBuffer: only the checksum sees them.
  MESSAGE(by_checksum << " of " << record.size() * 8
                      << " flips refused by the checksum");
  CHECK(by_checksum > 0);
}

TEST_CASE("a checksum mismatch is described with both values") {
  std::string record = testing::text_record("c", "abc");
  REQUIRE(schema::stamp_sequences(record, {1, 1}));
  record[record.find("abc")] = 'x';
  auto verified = schema::verify_record(record);
  REQUIRE_FALSE(verified.has_value());
  const std::string text = verified.error().describe(record.size());
  CHECK(text.starts_with("checksum mismatch (stored 0x"));
  CHECK(text.find(", computed 0x") != std::string::npos);
  CHECK(text.ends_with("the record's " + std::to_string(record.size()) +
                       " bytes are damaged"));
}

// A record as schemas 1 and 2 wrote it: no checksum field.
std::string record_without_checksum(std::uint16_t schema_version) {
  flatbuffers::FlatBufferBuilder builder;
  builder.ForceDefaults(true);
  auto agent =
      schema::CreateAgentUnregistered(builder, builder.CreateString("a1"));
  schema::RecordBuilder root(builder);
  root.add_schema_version(schema_version);
  root.add_log_sequence(9);
  root.add_channel_sequence(0);
  root.add_body_type(schema::Body::AgentUnregistered);
  root.add_body(agent.Union());
  schema::FinishRecordBuffer(builder, root.Finish());
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()),
                     builder.GetSize());
}

TEST_CASE("records of schemas 1 and 2 carry no checksum and still verify") {
  for (std::uint16_t version : {1, 2}) {
    INFO("schema " << version);
    std::string record = record_without_checksum(version);
    CHECK_FALSE(schema::record_checksum_offset(record).has_value());
    auto verified = schema::verify_record(record);
    REQUIRE(verified.has_value());
    CHECK(verified->log_sequence == 9);
    // Stamping an old record leaves it without a checksum.
    REQUIRE(schema::stamp_sequences(record, {10, 0}));
    CHECK(schema::verify_record(record)->log_sequence == 10);
  }
}

TEST_CASE("a record of schema 3 without a checksum is refused") {
  std::string record = record_without_checksum(3);
  auto verified = schema::verify_record(record);
  REQUIRE_FALSE(verified.has_value());
  CHECK(verified.error().kind == schema::RecordFault::Kind::kNoChecksum);
  CHECK(verified.error()
            .describe(record.size())
            .starts_with("record of schema version 3 carries no checksum"));
}

TEST_CASE("bytes without the file identifier fail verification") {
  std::string record = testing::text_record("c", "x");
  record.replace(4, 4, "XXXX");
  CHECK_FALSE(schema::verify_record(record).has_value());
}

}  // namespace
}  // namespace parley

namespace parley {
namespace {

// Found by fuzz_records: flatbuffers 2.0.8's FlexBuffers Verifier passes a
// key with no terminating NUL in its buffer (VerifyKey stops at the first
// non-zero byte), and reading event_data then ran past the record
// (AddressSanitizer: heap-buffer-overflow in flex_to_json). verify_record
// checks every key itself (schemas/flex_keys.h).
TEST_CASE("a FlexBuffer key without its terminating NUL is refused") {
  // A FlexBuffer whose root is the key "ab": key bytes, the root's offset
  // back to them, its packed type (FBT_KEY, 8-bit) and byte width.
  const std::uint8_t terminated[] = {'a', 'b', 0, 3, flexbuffers::FBT_KEY << 2,
                                     1};
  const std::uint8_t unterminated[] = {'a', 'b', 2, flexbuffers::FBT_KEY << 2,
                                       1};
  CHECK(schema::verify_record(
            schema::build_envelope_record(minimal_fields(terminated)))
            .has_value());
  auto refused = schema::verify_record(
      schema::build_envelope_record(minimal_fields(unterminated)));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == schema::RecordFault::Kind::kMalformed);
}

}  // namespace
}  // namespace parley
