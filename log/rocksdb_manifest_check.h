// Internal to the RocksDB backend: checks a store's MANIFEST (RocksDB's
// list of the store's files) record by record before RocksDB reads it.
//
// Why: RocksDB reads the MANIFEST tolerating an incomplete last record (a
// crash mid-write) without a word, whatever made it incomplete, losing
// the version edit it held (for instance the table file the last
// recovery flush wrote); and a secondary instance (every read-only open)
// reads it with a reader built to follow a growing file, which on some
// damaged MANIFESTs spins forever. Both were found by
// tests/store_corruption_test.cc.
//
// Layout read (RocksDB's log format, the WAL's too): 32 KiB blocks of
// physical records
//   masked CRC32C (fixed32) | payload length (fixed16) | type (1) | payload
// the CRC covering the type byte and the payload; types 1 (full), 2
// (first), 3 (middle), 4 (last); a block's last 0-6 bytes, too few for a
// header, are zeros. The MANIFEST in use is the one CURRENT names.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>

#include "log/error.h"

namespace parley::log::rocksdb_backend {

// The MANIFEST as a clean close left it: its bytes were synced whole, and
// a later open may have appended to it (a crash there tears only what it
// appended) or moved to a new MANIFEST.
struct ClosedManifest {
  // Empty: whichever MANIFEST CURRENT names, every byte whole (a mark
  // written before marks named the MANIFEST).
  std::string name;
  std::uint64_t size = std::numeric_limits<std::uint64_t>::max();

  bool operator==(const ClosedManifest&) const = default;
};

// The MANIFEST CURRENT names in `directory`; nullopt when CURRENT is
// missing or does not name one.
std::optional<std::string> current_manifest_name(
    const std::filesystem::path& directory);

// kCorruption naming the MANIFEST and the byte where a record of it is
// damaged (a CRC mismatch, an impossible length or type), where it ends
// with an incomplete record that began within what `closed` holds whole,
// or where it ends short of `closed`'s size. Without `closed` (a store
// that crashed, or that a writer holds) an incomplete last record is a
// torn tail and passes, as it does past `closed`'s bytes or in a MANIFEST
// other than `closed`'s. Passes when CURRENT is missing, does not name a
// MANIFEST or names one that is gone (RocksDB reports that, or a live
// writer replaced it).
// kIoError when the file cannot be read.
Result<void> check_manifest(const std::filesystem::path& directory,
                            const std::optional<ClosedManifest>& closed);

}  // namespace parley::log::rocksdb_backend
