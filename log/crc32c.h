// CRC32C (Castagnoli), the checksum of RocksDB's WAL and MANIFEST records.
//
// This module also takes the place of RocksDB's own CRC32C in the process:
// Debian's librocksdb is built for baseline x86-64, so its
// rocksdb::crc32c::Extend is the table-driven one (about 2.5 instructions a
// byte, a sixth of the log thread's instructions on a post), and librocksdb
// calls Extend through its PLT, so the definition in crc32c.cc, linked into the
// executable, is the one every call in the process reaches. It computes the
// same function with SSE4.2's crc32 instruction where the CPU has it. Only
// on x86-64: elsewhere RocksDB's own is left in place.
// Linking it needs nothing more than linking parley_log: the store's
// MANIFEST check calls crc32c_extend, which is defined beside it.
#pragma once

#include <cstdint>
#include <string_view>

namespace parley::log {

// The CRC32C of the bytes that `crc` is the CRC32C of, followed by `bytes`
// (crc32c_extend(0, bytes) is the CRC32C of `bytes`): RocksDB's
// crc32c::Extend.
std::uint32_t crc32c_extend(std::uint32_t crc, std::string_view bytes);

// The same, a byte at a time from a table: what crc32c_extend does on a CPU
// without SSE4.2 (exposed so that tests can hold the two against each other).
std::uint32_t crc32c_extend_portable(std::uint32_t crc, std::string_view bytes);

// Whether crc32c_extend uses the CPU's crc32 instruction.
bool crc32c_uses_hardware();

// RocksDB's masked form of a record's CRC32C, as its WAL and MANIFEST
// record headers store it.
inline std::uint32_t crc32c_masked(std::string_view bytes) {
  const std::uint32_t crc = crc32c_extend(0, bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace parley::log
