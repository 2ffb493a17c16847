// The log record schema: what an envelope record keeps, and the Verifier.
#include <doctest/doctest.h>
#include <flatbuffers/flexbuffers.h>

#include <random>

#include "parley/schemas/log_generated.h"
#include "schemas/record.h"
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
  CHECK_FALSE(schema::verify_record(record).has_value());
}

TEST_CASE("bytes without the file identifier fail verification") {
  std::string record = testing::text_record("c", "x");
  record.replace(4, 4, "XXXX");
  CHECK_FALSE(schema::verify_record(record).has_value());
}

}  // namespace
}  // namespace parley
