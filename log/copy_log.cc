#include "log/copy_log.h"

#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace parley::log {
namespace {

std::unexpected<Error> corrupt(std::string what) {
  return std::unexpected(Error{ErrorCode::kCorruption, std::move(what)});
}

// Which channel and key each log sequence of `from` is indexed under.
struct Indexes {
  std::vector<std::string> channels;  // channel number -> id
  // log sequence - 1 -> channel number + 1 (0: no channel)
  std::vector<std::uint32_t> channel_of;
  std::unordered_map<std::uint64_t, std::string> key_of;
  std::uint64_t channel_entries = 0;
};

Result<Indexes> read_indexes(const LogStore& from, std::uint64_t last) {
  Indexes indexes;
  indexes.channel_of.assign(last, 0);
  std::optional<Error> bad;
  std::string current;
  auto scanned = from.scan_channel_index(
      [&](std::string_view channel, std::uint64_t, std::uint64_t sequence) {
        if (sequence == 0 || sequence > last ||
            indexes.channel_of[sequence - 1] != 0) {
          bad = Error{ErrorCode::kCorruption,
                      "channel index of " + std::string(channel) +
                          ": an entry points at log sequence " +
                          std::to_string(sequence) +
                          ", outside the log or indexed twice"};
          return false;
        }
        if (indexes.channels.empty() || channel != indexes.channels.back()) {
          indexes.channels.emplace_back(channel);
        }
        indexes.channel_of[sequence - 1] =
            static_cast<std::uint32_t>(indexes.channels.size());
        ++indexes.channel_entries;
        return true;
      });
  if (!scanned) return std::unexpected(scanned.error());
  if (bad) return std::unexpected(*bad);
  scanned = from.scan_idempotency_index(
      [&](std::string_view key, std::uint64_t sequence) {
        if (sequence == 0 || sequence > last ||
            !indexes.key_of.emplace(sequence, key).second) {
          bad = Error{ErrorCode::kCorruption,
                      "idempotency index: a key points at log sequence " +
                          std::to_string(sequence) +
                          ", outside the log or indexed twice"};
          return false;
        }
        return true;
      });
  if (!scanned) return std::unexpected(scanned.error());
  if (bad) return std::unexpected(*bad);
  return indexes;
}

}  // namespace

Result<CopyReport> copy_log(const LogStore& from, LogStore& to,
                            std::size_t batch_records,
                            const CopyProgress& progress) {
  if (to.last_sequence() != 0) {
    return std::unexpected(
        Error{ErrorCode::kInvalidArgument,
              "the destination holds " + std::to_string(to.last_sequence()) +
                  " records; a copy goes only into an empty store"});
  }
  const std::uint64_t last = from.last_sequence();
  auto indexes = read_indexes(from, last);
  if (!indexes) return std::unexpected(indexes.error());
  CopyReport report{.channel_entries = indexes->channel_entries,
                    .idempotency_keys = indexes->key_of.size()};
  std::vector<AppendEntry> batch;
  std::vector<Position> wanted;
  auto write = [&]() -> Result<void> {
    if (batch.empty()) return {};
    auto appended = to.append(batch);
    if (!appended) return std::unexpected(appended.error());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const Position& got = (*appended)[i];
      if (got.log_sequence != wanted[i].log_sequence ||
          got.channel_sequence != wanted[i].channel_sequence) {
        return corrupt(
            "log sequence " + std::to_string(wanted[i].log_sequence) +
            ": copied as log sequence " + std::to_string(got.log_sequence) +
            ", channel sequence " + std::to_string(got.channel_sequence) +
            " (the source's indexes are not dense)");
      }
    }
    report.records += batch.size();
    if (progress) progress(wanted.back().log_sequence);
    batch.clear();
    wanted.clear();
    return {};
  };
  std::optional<Error> failed;
  std::unordered_map<std::uint32_t, std::uint64_t> channel_sequences;
  auto read =
      from.read(1, last, [&](std::uint64_t sequence, std::string_view record) {
        AppendEntry entry{.record = std::string(record)};
        Position position{sequence, 0};
        if (const std::uint32_t channel = indexes->channel_of[sequence - 1]) {
          entry.channel = indexes->channels[channel - 1];
          position.channel_sequence = ++channel_sequences[channel];
        }
        if (auto key = indexes->key_of.find(sequence);
            key != indexes->key_of.end()) {
          entry.idempotency_key = key->second;
        }
        batch.push_back(std::move(entry));
        wanted.push_back(position);
        if (batch.size() < batch_records) return true;
        if (auto written = write(); !written) {
          failed = written.error();
          return false;
        }
        return true;
      });
  if (!read) return std::unexpected(read.error());
  if (failed) return std::unexpected(*failed);
  if (auto written = write(); !written) {
    return std::unexpected(written.error());
  }
  if (auto flushed = to.flush(); !flushed) {
    return std::unexpected(flushed.error());
  }
  return report;
}

Result<void> compare_logs(const LogStore& a, const LogStore& b) {
  if (a.last_sequence() != b.last_sequence()) {
    return corrupt("the logs end at log sequences " +
                   std::to_string(a.last_sequence()) + " and " +
                   std::to_string(b.last_sequence()));
  }
  // The records, a chunk at a time.
  constexpr std::uint64_t kChunk = 4096;
  std::vector<std::string> chunk;
  for (std::uint64_t from = 1; from <= a.last_sequence(); from += kChunk) {
    const std::uint64_t to = from + kChunk - 1;
    chunk.clear();
    auto read = a.read(from, to, [&](std::uint64_t, std::string_view record) {
      chunk.emplace_back(record);
      return true;
    });
    if (!read) return read;
    std::optional<std::uint64_t> differs;
    std::size_t at = 0;
    read = b.read(from, to, [&](std::uint64_t sequence, std::string_view r) {
      if (at >= chunk.size() || chunk[at++] != r) differs = sequence;
      return !differs;
    });
    if (!read) return read;
    if (differs) {
      return corrupt("log sequence " + std::to_string(*differs) +
                     ": the records differ");
    }
  }
  using ChannelEntry = std::tuple<std::string, std::uint64_t, std::uint64_t>;
  auto channel_index =
      [](const LogStore& store) -> Result<std::vector<ChannelEntry>> {
    std::vector<ChannelEntry> entries;
    auto scanned = store.scan_channel_index([&](std::string_view channel,
                                                std::uint64_t channel_sequence,
                                                std::uint64_t sequence) {
      entries.emplace_back(channel, channel_sequence, sequence);
      return true;
    });
    if (!scanned) return std::unexpected(scanned.error());
    return entries;
  };
  auto channels_a = channel_index(a);
  if (!channels_a) return std::unexpected(channels_a.error());
  auto channels_b = channel_index(b);
  if (!channels_b) return std::unexpected(channels_b.error());
  if (*channels_a != *channels_b) return corrupt("the channel indexes differ");
  using KeyEntry = std::pair<std::string, std::uint64_t>;
  auto keys = [](const LogStore& store) -> Result<std::vector<KeyEntry>> {
    std::vector<KeyEntry> entries;
    auto scanned = store.scan_idempotency_index(
        [&](std::string_view key, std::uint64_t sequence) {
          entries.emplace_back(key, sequence);
          return true;
        });
    if (!scanned) return std::unexpected(scanned.error());
    return entries;
  };
  auto keys_a = keys(a);
  if (!keys_a) return std::unexpected(keys_a.error());
  auto keys_b = keys(b);
  if (!keys_b) return std::unexpected(keys_b.error());
  if (*keys_a != *keys_b) return corrupt("the idempotency indexes differ");
  return {};
}

}  // namespace parley::log
