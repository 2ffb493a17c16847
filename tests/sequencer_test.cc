// Sequencer (log/sequencer.h) as the backends drive it, hammered by many
// appenders: check_entries outside the lock, assign under it, then
// stamp_checksums. Log
// sequences come out dense and unique, each channel's sequences dense and
// in log order, the stamped records carry them, and a reused idempotency
// key is refused without using up a sequence.
#include "log/sequencer.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "log/mutex.h"
#include "parley/schemas/log_generated.h"
#include "schemas/record.h"
#include "schemas/record_checksum.h"
#include "tests/test_support.h"

namespace parley {
namespace {

using log::AppendEntry;
using log::ErrorCode;
using log::Mutex;
using log::MutexLock;
using log::Position;
using log::Sequencer;

constexpr int kThreads = 8;
constexpr int kBatchesPerThread = 250;
constexpr int kChannels = 5;

// What every appender saw, shared under one lock: the backend's.
struct Appenders {
  Mutex mutex;
  Sequencer sequencer GUARDED_BY(mutex){0};
  std::set<std::string> durable_keys GUARDED_BY(mutex);
  // Every record the sequencer stamped, as verify_record reads it back,
  // with its channel.
  std::vector<std::pair<std::string, schema::RecordSequences>> stamped
      GUARDED_BY(mutex);
  int conflicts GUARDED_BY(mutex) = 0;
  int other_errors GUARDED_BY(mutex) = 0;
};

// A checksummed record of this schema whose root table lacks the sequence
// fields (written by a builder that left their defaults out).
std::string record_without_sequences() {
  flatbuffers::FlatBufferBuilder builder;
  auto body =
      schema::CreateAgentUnregistered(builder, builder.CreateString("a1"));
  schema::RecordBuilder root(builder);
  root.add_schema_version(schema::kSchemaVersion);
  root.add_checksum(1);  // not the default, so it is written; stamped below
  root.add_body_type(schema::Body::AgentUnregistered);
  root.add_body(body.Union());
  schema::FinishRecordBuffer(builder, root.Finish());
  std::string record(reinterpret_cast<const char*>(builder.GetBufferPointer()),
                     builder.GetSize());
  schema::stamp_checksum(record, *schema::record_checksum_offset(record));
  return record;
}

TEST_CASE("a record without sequence fields is refused, and left unchanged") {
  const std::string record = record_without_sequences();
  REQUIRE(schema::verify_record(record).has_value());
  CHECK_FALSE(schema::has_sequence_fields(record));
  CHECK(schema::has_sequence_fields(testing::text_record("c", "x")));
  std::vector<AppendEntry> batch{testing::text_entry("c", "x"),
                                 {.record = record}};
  auto checked = Sequencer::check_entries(batch);
  REQUIRE_FALSE(checked.has_value());
  CHECK(checked.error().code == ErrorCode::kInvalidArgument);
  CHECK(checked.error().message ==
        "batch entry 1: not a valid log record (it has no sequence fields)");
  CHECK(batch[1].record == record);
}

TEST_CASE("a record from outside this process is verified: damage is refused") {
  std::vector<AppendEntry> batch{testing::text_entry("c", "some text")};
  batch[0].record[batch[0].record.size() / 2] ^= 0x01;
  auto checked = Sequencer::check_entries(batch);
  REQUIRE_FALSE(checked.has_value());
  CHECK(checked.error().code == ErrorCode::kInvalidArgument);
  CHECK(checked.error().message.starts_with(
      "batch entry 0: not a valid log record ("));
}

TEST_CASE("a freshly built record is still checked for its sequence fields") {
  std::vector<AppendEntry> batch{
      {.record = record_without_sequences(), .freshly_built = true}};
  auto checked = Sequencer::check_entries(batch);
  REQUIRE_FALSE(checked.has_value());
  CHECK(checked.error().message ==
        "batch entry 0: not a valid log record (it has no sequence fields)");
}

TEST_CASE(
    "assign writes a record's sequences and stamp_checksums its checksum") {
  Sequencer sequencer(0);
  const Sequencer::Lookups lookups{
      .last_channel_sequence =
          [](std::string_view) -> log::Result<std::uint64_t> { return 0; },
      .key_exists = [](std::string_view) -> log::Result<bool> {
        return false;
      }};
  std::vector<AppendEntry> batch{testing::text_entry("c", "a")};
  REQUIRE(sequencer.assign(batch, lookups));
  auto stale = schema::verify_record(batch[0].record);
  REQUIRE_FALSE(stale.has_value());
  CHECK(stale.error().kind == schema::RecordFault::Kind::kChecksumMismatch);
  Sequencer::stamp_checksums(batch);
  auto read = schema::verify_record(batch[0].record);
  REQUIRE(read.has_value());
  CHECK(read->log_sequence == 1);
  CHECK(read->channel_sequence == 1);
}

TEST_CASE("concurrent appends get dense log and channel sequences") {
  Appenders shared;
  const Sequencer::Lookups lookups{
      .last_channel_sequence =
          [](std::string_view) -> log::Result<std::uint64_t> { return 0; },
      .key_exists = [&shared](std::string_view key)
                        NO_THREAD_SAFETY_ANALYSIS -> log::Result<bool> {
        // Called by assign(), under shared.mutex.
        return shared.durable_keys.contains(std::string(key));
      }};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatchesPerThread; ++b) {
        std::vector<AppendEntry> batch;
        const int size = 1 + (t + b) % 3;
        for (int i = 0; i < size; ++i) {
          const std::string channel =
              "channel-" + std::to_string((t * 7 + b + i) % kChannels);
          // Every 10th batch reuses the key of this thread's first batch.
          std::string key;
          if (i == 0 && b % 10 == 0) {
            key = "key-" + std::to_string(t) + "-0";
          } else if (i == 0 && b % 4 == 0) {
            key = "key-" + std::to_string(t) + "-" + std::to_string(b);
          }
          batch.push_back(testing::text_entry(channel, "x", key));
        }
        CHECK(Sequencer::check_entries(batch));  // thread safe, unlocked
        MutexLock lock(shared.mutex);
        auto assigned = shared.sequencer.assign(batch, lookups);
        if (!assigned) {
          if (assigned.error().code == ErrorCode::kConflict) {
            ++shared.conflicts;
          } else {
            ++shared.other_errors;
          }
          continue;
        }
        // The backend stamps the checksums before it writes the batch.
        Sequencer::stamp_checksums(batch);
        for (std::size_t i = 0; i < batch.size(); ++i) {
          auto read = schema::verify_record(batch[i].record);
          CHECK(read);
          if (!read) continue;
          CHECK(read->log_sequence == batch[i].position.log_sequence);
          CHECK(read->channel_sequence == batch[i].position.channel_sequence);
          shared.stamped.emplace_back(batch[i].channel, *read);
          if (!batch[i].idempotency_key.empty()) {
            // The backend made it durable.
            shared.durable_keys.insert(batch[i].idempotency_key);
            shared.sequencer.key_committed(batch[i].idempotency_key);
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();

  MutexLock lock(shared.mutex);
  CHECK(shared.other_errors == 0);
  // Batch 0 of each thread takes its key; batches 10, 20, ... reuse it.
  CHECK(shared.conflicts == kThreads * ((kBatchesPerThread - 1) / 10));
  std::uint64_t next_log = 1;
  std::map<std::string, std::uint64_t> next_in_channel;
  std::sort(shared.stamped.begin(), shared.stamped.end(),
            [](const auto& a, const auto& b) {
              return a.second.log_sequence < b.second.log_sequence;
            });
  int gaps = 0;
  for (const auto& [channel, sequences] : shared.stamped) {
    if (sequences.log_sequence != next_log) ++gaps;
    next_log = sequences.log_sequence + 1;
    std::uint64_t& in_channel = next_in_channel[channel];
    if (sequences.channel_sequence != in_channel + 1) ++gaps;
    in_channel = sequences.channel_sequence;
  }
  CHECK(gaps == 0);
  CHECK(next_log - 1 == shared.stamped.size());
  CHECK(next_in_channel.size() == kChannels);
}

TEST_CASE("a key in flight is refused until the backend commits it") {
  Sequencer sequencer(0);
  std::set<std::string> durable;
  const Sequencer::Lookups lookups{
      .last_channel_sequence =
          [](std::string_view) -> log::Result<std::uint64_t> { return 7; },
      .key_exists = [&](std::string_view key) -> log::Result<bool> {
        return durable.contains(std::string(key));
      }};
  std::vector<AppendEntry> first{testing::text_entry("c", "a", "k")};
  REQUIRE(sequencer.assign(first, lookups));
  CHECK(first[0].position.log_sequence == 1);
  CHECK(first[0].position.channel_sequence == 8);  // after the durable 7
  std::vector<AppendEntry> again{testing::text_entry("c", "b", "k")};
  auto refused = sequencer.assign(again, lookups);
  REQUIRE(!refused);
  CHECK(refused.error().code == ErrorCode::kConflict);
  durable.insert("k");
  sequencer.key_committed("k");
  CHECK(!sequencer.assign(again, lookups));  // durable now: still refused
  std::vector<AppendEntry> twice{testing::text_entry("c", "c", "j"),
                                 testing::text_entry("c", "d", "j")};
  CHECK(!sequencer.assign(twice, lookups));  // twice in one batch
  std::vector<AppendEntry> next{testing::text_entry("c", "e")};
  REQUIRE(sequencer.assign(next, lookups));
  CHECK(next[0].position.log_sequence == 2);  // refusals used up nothing
  CHECK(next[0].position.channel_sequence == 9);
}

}  // namespace
}  // namespace parley
