// The checksum every record of schema 3 or newer carries (`Record.checksum`
// in schemas/log.fbs): XXH3-64, seed 0, over the record's bytes with the
// checksum's own 8 bytes left out.
//
// XXH3 rather than CRC32C: 64 bits (a damaged record passes with odds of
// 2^-64, not 2^-32), and on x86-64 it hashes a 640-byte record in about
// 25 ns with the vector instructions libxxhash picks at run time. Anyone can
// recompute it: xxh3_64(record[:at] + record[at + 8:]), `at` being the field's
// offset (record_checksum_offset()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace parley::schema {

// The first schema version whose records carry a checksum.
inline constexpr std::uint16_t kFirstChecksummedSchema = 3;

// The byte offset of the checksum field in `record`, or nullopt when the
// record has none (schema 1 and 2). `record` must have passed the
// FlatBuffers Verifier.
std::optional<std::size_t> record_checksum_offset(std::string_view record);

// The checksum of `record` whose checksum field starts at `offset`
// (offset + 8 <= record.size()); the field's bytes do not matter.
std::uint64_t record_checksum(std::string_view record, std::size_t offset);

// The checksum the field at `offset` holds.
std::uint64_t stored_checksum(std::string_view record, std::size_t offset);

// Writes the checksum of `record` into its field at `offset`.
void stamp_checksum(std::span<char> record, std::size_t offset);

// XXH3-64, seed 0, of `bytes` (for other checksummed files of a store).
std::uint64_t xxh3_64(std::string_view bytes);

}  // namespace parley::schema
