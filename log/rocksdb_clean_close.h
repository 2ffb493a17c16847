// Internal to the RocksDB backend: the clean-close mark, which tells a torn
// WAL tail (a crash mid-write: tolerated and reported) from damage at the
// WAL's end (refused).
//
// RocksDB cannot tell them apart. A WAL record whose length byte was
// flipped so that it seems to run past the end of the file looks exactly
// like one a crash cut short, and kTolerateCorruptedTailRecords drops it
// and everything after it; RocksDB also drops an incomplete last MANIFEST
// entry without a word, whatever made it incomplete. A store that was
// closed cleanly has no torn tail, so:
//   * close() writes the mark once RocksDB has closed with every acked
//     record synced, naming the last log sequence and the MANIFEST CURRENT
//     names with its size;
//   * a read-write open that finds the mark replays the WAL strictly only
//     (any WAL damage is refused: nothing is dropped, nothing changed),
//     refuses a store that holds fewer records than the mark names, and
//     removes the mark before the first append, so that a crash later in
//     that session leaves none;
//   * the read-only views (`parley audit`, `parley log info`) report the
//     same: a torn tail under a mark is damage.
// RocksDB writes to the MANIFEST while a store opens (a new MANIFEST, then
// the entries of the flushes and compactions it starts) before the open
// can remove the mark, so a crash then leaves the mark beside a MANIFEST
// whose end is torn: only the bytes the mark names must be whole
// (rocksdb_manifest_check.h).
//
//   file   <store>/PARLEY-CLEAN-CLOSE, written through the store's
//          rocksdb::Env (a temporary file synced, renamed, the directory
//          synced)
//   bytes  "parley clean close: last log sequence <N>, <MANIFEST-…> of
//          <size> bytes, xxh3 <16 hex>\n", xxh3 being XXH3-64 of the text
//          before ", xxh3"; a mark written before the MANIFEST was named
//          lacks ", <MANIFEST-…> of <size> bytes" and holds every byte of
//          the MANIFEST CURRENT names to be whole
#pragma once

#include <rocksdb/env.h>

#include <cstdint>
#include <filesystem>
#include <optional>

#include "log/error.h"
#include "log/rocksdb_manifest_check.h"

namespace parley::log::rocksdb_backend {

inline constexpr std::string_view kCleanCloseFile = "PARLEY-CLEAN-CLOSE";

struct CleanClose {
  std::uint64_t last_sequence = 0;
  ClosedManifest manifest;

  bool operator==(const CleanClose&) const = default;
};

// What `mark`, if any, holds of the MANIFEST (check_manifest's `closed`).
inline std::optional<ClosedManifest> closed_manifest(
    const std::optional<CleanClose>& mark) {
  if (!mark) return std::nullopt;
  return mark->manifest;
}

// The mark in `directory`; nullopt when there is none. kCorruption when it
// is damaged (naming it, and that removing it opens the store as after a
// crash).
Result<std::optional<CleanClose>> read_clean_close(
    rocksdb::Env& env, const std::filesystem::path& directory);

// Marks the store in `directory`, which RocksDB has closed, naming the
// MANIFEST CURRENT names and its size.
Result<void> write_clean_close(rocksdb::Env& env,
                               const std::filesystem::path& directory,
                               std::uint64_t last_sequence);

// Removes the mark, if any, durably.
Result<void> remove_clean_close(rocksdb::Env& env,
                                const std::filesystem::path& directory);

}  // namespace parley::log::rocksdb_backend
