// On-disk layout of the RocksDB LogStore.
//
//   column family  key                               value
//   -------------  --------------------------------  -------------------
//   log            be64 log_sequence                 Record FlatBuffer
//   channel_index  u8 n | channel id (n) | be64 seq  be64 log_sequence
//   idempotency    idempotency key bytes             be64 log_sequence
//   meta           "format_version"                  decimal, e.g. "3"
//   default        (unused; RocksDB requires it)
//
//   be64 = unsigned 64-bit big-endian, so byte order = numeric order and a
//   forward scan of `log` is log-sequence order. The length byte in front of
//   a channel id keeps one channel's keys contiguous and apart from every
//   other channel's, whatever bytes the ids hold.
//
// One append = one RocksDB WriteBatch holding the record and all its index
// entries, so they become durable together or not at all.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parley::log::rocksdb_layout {

inline constexpr std::string_view kLogFamily = "log";
inline constexpr std::string_view kChannelIndexFamily = "channel_index";
inline constexpr std::string_view kIdempotencyFamily = "idempotency";
inline constexpr std::string_view kMetaFamily = "meta";
inline constexpr std::string_view kFormatVersionKey = "format_version";
// The store's format: 1 holds records of schema 1 only; 2 may hold records
// of schema 2; 3 may hold records of schema 3, which carry a checksum
// (schemas/record.h). This build reads all three, each record by its own
// schema version: a store of format 1 or 2 keeps its old records, without
// checksums, and they are read as before. A read-write open marks a store
// of format 1 or 2 as 3 before anything is appended, so that a build that
// reads only older formats refuses the store by name instead of meeting
// records it takes for damage; a read-only open leaves it as it is.
inline constexpr std::string_view kFormatVersion = "3";
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

}  // namespace parley::log::rocksdb_layout
