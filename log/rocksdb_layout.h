// On-disk layout of the RocksDB LogStore.
//
//   column family  key                               value
//   -------------  --------------------------------  -------------------
//   log            be64 log_sequence                 Record FlatBuffer
//   channel_index  u8 n | channel id (n) | be64 seq  index run (below)
//   idempotency    idempotency key bytes             be64 log_sequence
//   meta           "format_version"                  decimal, e.g. "3"
//   default        (unused; RocksDB requires it)
//
//   be64 = unsigned 64-bit big-endian, so byte order = numeric order and a
//   forward scan of `log` is log-sequence order. The length byte in front of
//   a channel id keeps one channel's keys contiguous and apart from every
//   other channel's, whatever bytes the ids hold.
//
// One group of appends = one RocksDB WriteBatch holding the records and all
// their index entries, so they become durable together or not at all.
//
// A channel-index entry covers a run of the channel's sequences that one
// group wrote: its key holds the first, its value (an index run) the log
// sequences of that one and of those after it, in order: be64 of the first,
// then per further one an unsigned LEB128 varint of its distance (>= 1) from
// the one before. A run of one is the 8-byte value every entry of formats 1
// to 3 holds, so those stores read the same way. Runs of one channel never
// overlap, and the run after one ending at channel sequence s starts at s+1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace parley::log::rocksdb_layout {

inline constexpr std::string_view kLogFamily = "log";
inline constexpr std::string_view kChannelIndexFamily = "channel_index";
inline constexpr std::string_view kIdempotencyFamily = "idempotency";
inline constexpr std::string_view kMetaFamily = "meta";
inline constexpr std::string_view kFormatVersionKey = "format_version";
// The store's format: 1 holds records of schema 1 only; 2 may hold records
// of schema 2; 3 may hold records of schema 3, which carry a checksum
// (schemas/record.h); 4 may hold channel-index runs longer than one. This
// build reads all four, each record by its own schema version: a store of
// format 1 or 2 keeps its old records, without checksums, and they are read
// as before. A read-write open marks an older store as 4 before anything
// is appended, so that a build that reads only older formats refuses the
// store by name instead of meeting records or index runs it takes for
// damage; a read-only open leaves it as it is.
inline constexpr std::string_view kFormatVersion = "4";
inline constexpr std::string_view kOldestFormatVersion = "1";

// Whether this build reads a store of format `version` (kOldestFormatVersion
// to kFormatVersion, single decimal digits).
bool readable_format_version(std::string_view version);

std::string encode_be64(std::uint64_t value);
// nullopt unless `bytes` is exactly 8 bytes.
std::optional<std::uint64_t> decode_be64(std::string_view bytes);

// The key prefix all of `channel`'s index entries share.
std::string channel_prefix(std::string_view channel);
std::string channel_key(std::string_view channel,
                        std::uint64_t channel_sequence);

// Appends one more log sequence to an index run: the first as be64, each
// later one as its distance from `previous`, which it must exceed.
void append_to_index_run(std::string& run, std::uint64_t previous,
                         std::uint64_t log_sequence);
// The log sequences of an index run, into `out` (cleared first); false
// unless `bytes` is a well-formed run (a truncated varint, one of more
// than 64 bits, a distance of 0, or a sequence past 2^64 - 1 is not).
bool decode_index_run(std::string_view bytes, std::vector<std::uint64_t>& out);

}  // namespace parley::log::rocksdb_layout
