// The RocksDB LogStore: Parley's embedded, durable default backend.
// Key layout: log/rocksdb_layout.h.
//
// Durability: in Durability::kSync every append is acked only after the
// RocksDB WAL holding it has been fsynced. Appends that arrive while a sync
// is in flight are group-committed: one WriteBatch, one sync, then all of
// them are acked. A failed write or sync is fatal: the store refuses every
// further append with kFailed and never retries. In Durability::kAsync an
// append is acked once written to the WAL, unsynced, so a power cut may
// take the newest acked appends, but only a tail of the log: whenever
// RocksDB moves on to a new WAL file, every older one is synced before the
// new one takes a record (log/rocksdb_wal_order.h).
//
// A full disk is not fatal: a write that fails for want of space fails its
// group (nothing of it is written or acked) and the batches sequenced
// behind it; appends are then refused with kNoSpace until resume() finds
// room again and RocksDB resumes writing.
//
// Recovery on open: a torn tail (an incomplete record at the end of the WAL,
// left by a crash mid-write) is dropped and reported; those bytes were never
// acked. A damaged record before the end of the WAL, WAL files that skip
// log sequences (an older one lost records a newer one follows), or a
// damaged table file, is refused: open fails with kCorruption naming the
// damage, and nothing is cut away. A store that was closed cleanly cannot
// have a torn tail: close() leaves a mark naming its last log sequence
// (log/rocksdb_clean_close.h), and the open after it refuses any damage to
// the WAL, its end included, and any store holding fewer records than the
// mark names.
//
// Creation is atomic as users see it: a store whose creation a crash cut
// short holds no record and is completed by the next open.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "log/log_store.h"

namespace rocksdb {
class Env;
}

namespace parley::log {

struct RocksDbOptions {
  Durability durability = Durability::kSync;
  bool create_if_missing = true;
  // Not owned; must outlive the store. nullptr: RocksDB's default Env.
  // Tests inject file-system faults through it.
  rocksdb::Env* env = nullptr;
  // Appends are refused with kNoSpace (nothing written, the store stays
  // usable) while the store's file system has less free space than this,
  // so a filling disk stops appends before RocksDB itself runs out of
  // space mid-write. Free space is sampled at most every 10 ms. 0 disables.
  std::uint64_t min_free_bytes = 64 << 20;
  // Bytes a memtable holds before RocksDB flushes it to a table file;
  // 0: RocksDB's default (64 MiB).
  std::size_t write_buffer_size = 0;
};

// What opening the store found.
struct RecoveryReport {
  bool created = false;    // the store did not exist and was created
  bool torn_tail = false;  // an incomplete WAL tail was dropped
  std::string detail;      // what RocksDB found, when torn_tail
  // PostgreSQL: sessions of a writer whose lease had lapsed that the open
  // ended to take the store over.
  int lapsed_writers_ended = 0;
};

struct OpenedLogStore {
  std::unique_ptr<LogStore> store;
  RecoveryReport recovery;
};

// Opens (or creates) the store in `directory`. Fails with kNotFound (no
// store and !create_if_missing), kBusy (another process holds it),
// kCorruption (mid-log WAL damage, WAL files that skip log sequences, not
// a Parley store, a record on the newest end that fails verification),
// kVersionMismatch or kIoError.
Result<OpenedLogStore> open_rocksdb_log_store(
    const std::filesystem::path& directory, const RocksDbOptions& options = {});

// Opens the store in `directory` read-only, as a RocksDB secondary
// instance, so it works while a live hub holds the store's lock. Sees the
// store as it was when opened; wait_for_append() catches up with what the
// primary appended since (polling every 50 ms), so a Tail on it follows a
// live hub; a catch-up that finds the store damaged makes every later read
// fail with kCorruption. append() fails with kReadOnly. Writes nothing,
// anywhere. Fails with kNotFound (no Parley store at `directory`; nothing
// is created), kCorruption (not a Parley store, or a damaged table file,
// named), kVersionMismatch or kIoError.
Result<std::unique_ptr<LogStore>> open_rocksdb_log_store_read_only(
    const std::filesystem::path& directory);

// Whether a process, this one included, holds the store in `directory`
// open read-write (a live hub). Another process's lock is found by an
// open-file-description lock probe of the LOCK file; this process's own
// read-write opens are known without touching the file (closing a probe's
// descriptor would release this process's POSIX lock on it).
bool store_is_locked(const std::filesystem::path& directory);

// The incomplete record that ends the store's WAL (what RocksDB says of
// it), which the next read-write open will drop; nullopt when the WAL ends
// cleanly, or when another process holds the store (a live writer's WAL
// may end mid-record). Reads the whole WAL. Fails with kCorruption when
// the WAL is damaged before its end, when it ends with an incomplete
// record although the store was closed cleanly (damage, not a torn tail:
// the next open refuses it), when its files skip log sequences or a table
// file is damaged; or kIoError.
Result<std::optional<std::string>> find_torn_wal_tail(
    const std::filesystem::path& directory);

}  // namespace parley::log
