// fuzz_records: log records from raw bytes (record_stream.h frames them),
// through what every read of a store does with them: verify_record
// (FlatBuffers Verifier, checksum, schema version) and check_record, then,
// for an accepted record, the JSON `parley log dump` prints and the fold
// (HubState::apply, then the state hash `parley audit` computes). A record
// that fails only its checksum is restamped (as the log stamps it) so that
// mutated payloads get past the checksum to the decoders.
//
// Asserts: verification does not depend on the record's address; a record
// refused is refused by check_record with kCorruption naming its log
// sequence; an accepted record passes
// check_record at its stamped sequences, its dump JSON has its sequence and
// kind and serializes to JSON text that parses; folding it never throws
// (an undecodable payload is an error naming the log sequence).
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/json/records_json.h"
#include "engine/records/log_records.h"
#include "engine/state/hub_state.h"
#include "log/record_check.h"
#include "parley/schemas/log_generated.h"
#include "replay/folded_store.h"
#include "replay/record_json.h"
#include "replay/state_hash.h"
#include "schemas/record.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/record_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace parley;
  static const auto adapters = replay::builtin_adapter_registry();
  engine::HubState state(*adapters);
  for (std::string_view raw : fuzz::split_records({data, size})) {
    // An exactly sized heap copy: aligned for FlatBuffers (malloc's
    // alignment) with no slack after it.
    auto copy = std::make_unique<char[]>(raw.size() + (raw.empty() ? 1 : 0));
    std::memcpy(copy.get(), raw.data(), raw.size());
    const std::span<char> buffer(copy.get(), raw.size());
    const std::string_view record(copy.get(), raw.size());

    auto stamped = schema::verify_record(raw);
    const auto aligned = schema::verify_record(record);
    FUZZ_CHECK(stamped.has_value() == aligned.has_value(),
               "verify_record depends on the record's address");
    if (!stamped &&
        stamped.error().kind == schema::RecordFault::Kind::kChecksumMismatch) {
      // The Verifier passed, so the root may be read.
      const schema::Record* root = schema::GetRecord(record.data());
      const schema::RecordSequences sequences{root->log_sequence(),
                                              root->channel_sequence()};
      // It may still be refused: for a newer schema version, or when its
      // fields overlap so that stamping one changes another.
      if (schema::stamp_sequences(buffer, sequences)) {
        stamped = schema::verify_record(record);
      }
    }
    if (!stamped) {
      auto checked = log::check_record(record, 7);
      FUZZ_CHECK(!checked &&
                     checked.error().code == log::ErrorCode::kCorruption &&
                     checked.error().message.starts_with("log sequence 7: "),
                 "check_record passed a record verify_record refused");
      continue;
    }
    const std::uint64_t sequence = stamped->log_sequence;
    auto checked =
        log::check_record(record, sequence, stamped->channel_sequence);
    FUZZ_CHECK(checked.has_value(), "check_record refused a verified record: " +
                                        checked.error().message);

    // parley log dump: one JSON object per record, text or JSON lines.
    const nlohmann::json dumped = replay::record_to_json(sequence, record);
    FUZZ_CHECK(dumped.at("log_sequence") == sequence,
               "dump names another log sequence");
    FUZZ_CHECK(dumped.at("kind") == replay::record_kind(record),
               "dump names another kind");
    const std::string line = engine::dump_compact(dumped);
    FUZZ_CHECK(nlohmann::json::accept(line), "dump is not JSON: " + line);
    if (auto envelope = engine::decode_envelope(record)) {
      (void)engine::dump_compact(engine::to_json(*envelope));
    }

    // The fold, as hydrate and parley audit run it.
    auto applied = state.apply(sequence, record);
    if (!applied) {
      FUZZ_CHECK(applied.error().message.find(std::to_string(sequence)) !=
                     std::string::npos,
                 "a fold error does not name the log sequence: " +
                     applied.error().message);
      return 0;
    }
  }
  (void)replay::store_state_hash(state);
  return 0;
}
