#include "log/sequencer.h"

#include <cassert>
#include <string>

#include "schemas/record.h"

namespace parley::log {

Result<void> Sequencer::check_entries(std::span<AppendEntry> batch) {
  for (std::size_t i = 0; i < batch.size(); ++i) {
    AppendEntry& entry = batch[i];
    if (entry.record.size() > kMaxRecordBytes) {
      return std::unexpected(Error{
          ErrorCode::kInvalidArgument,
          "batch entry " + std::to_string(i) + ": a record of " +
              std::to_string(entry.record.size()) + " bytes exceeds the " +
              std::to_string(kMaxRecordBytes) + " a record may hold"});
    }
    if (!entry.freshly_built) {
      if (auto verified = schema::verify_record(entry.record); !verified) {
        return std::unexpected(Error{
            ErrorCode::kInvalidArgument,
            "batch entry " + std::to_string(i) + ": not a valid log record (" +
                verified.error().describe(entry.record.size()) + ")"});
      }
    }
    if (!schema::has_sequence_fields(entry.record)) {
      return std::unexpected(
          Error{ErrorCode::kInvalidArgument,
                "batch entry " + std::to_string(i) +
                    ": not a valid log record (it has no sequence fields)"});
    }
    if (entry.channel.size() > kMaxChannelIdBytes) {
      return std::unexpected(
          Error{ErrorCode::kInvalidArgument,
                "batch entry " + std::to_string(i) + ": channel id of " +
                    std::to_string(entry.channel.size()) + " bytes exceeds " +
                    std::to_string(kMaxChannelIdBytes)});
    }
  }
  return {};
}

Result<void> Sequencer::check_indexes(std::span<AppendEntry> batch,
                                      const Lookups& lookups) {
  std::unordered_set<std::string_view> batch_keys;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const AppendEntry& entry = batch[i];
    if (!entry.channel.empty() &&
        !last_channel_sequence_.contains(entry.channel)) {
      auto last = lookups.last_channel_sequence(entry.channel);
      if (!last) return std::unexpected(last.error());
      last_channel_sequence_.emplace(entry.channel, *last);
    }
    if (entry.idempotency_key.empty()) continue;
    bool taken = keys_in_flight_.contains(entry.idempotency_key) ||
                 !batch_keys.insert(entry.idempotency_key).second;
    if (!taken) {
      auto exists = lookups.key_exists(entry.idempotency_key);
      if (!exists) return std::unexpected(exists.error());
      taken = *exists;
    }
    if (taken) {
      return std::unexpected(Error{
          ErrorCode::kConflict, "batch entry " + std::to_string(i) +
                                    ": idempotency key is already in the log"});
    }
  }
  return {};
}

Result<void> Sequencer::assign(std::span<AppendEntry> batch,
                               const Lookups& lookups) {
  if (auto checked = check_indexes(batch, lookups); !checked) return checked;
  for (AppendEntry& entry : batch) {
    Position position{++last_log_sequence_, 0};
    if (!entry.channel.empty()) {
      position.channel_sequence = ++last_channel_sequence_[entry.channel];
    }
    schema::write_sequences(entry.record,
                            {position.log_sequence, position.channel_sequence});
    if (!entry.idempotency_key.empty()) {
      keys_in_flight_.insert(entry.idempotency_key);
    }
    entry.position = position;
  }
  return {};
}

void Sequencer::stamp_checksums(std::span<AppendEntry> batch) {
  for (AppendEntry& entry : batch) {
    schema::stamp_record_checksum(entry.record);
    assert(!entry.freshly_built || schema::verify_record(entry.record));
  }
}

}  // namespace parley::log
