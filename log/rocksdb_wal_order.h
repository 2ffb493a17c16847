// Internal to the RocksDB backend: the order in which a store's WAL files
// become durable, so that a power cut costs at most a tail of the log.
//
// RocksDB starts a new WAL file whenever it switches a memtable (one fills
// up, of any column family), and the write that made it switch goes
// straight into the new file. With Durability::kAsync nothing syncs the
// old file until a background flush gets to it, so meanwhile the old
// file's tail and the new file's records are both unsynced, and nothing
// orders unsynced writes to different files: a power cut may keep the new
// file's records and lose the old file's tail. Recovery then replays what
// is left of the old file and goes on with the new one, and the log has a
// hole: in every recovery mode when the old file lost whole records (it
// then ends cleanly), and under kTolerateCorruptedTailRecords also when it
// was torn mid-record.
//
// WalSealSync closes that window; LogReplayCheck refuses any hole that
// reaches recovery all the same.
#pragma once

#include <rocksdb/listener.h>
#include <rocksdb/wal_filter.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "log/mutex.h"

namespace parley::log::rocksdb_backend {

// Syncs every WAL file of the attached database when a memtable is sealed.
// RocksDB seals memtables on the thread of the write that switches them,
// after it created the new WAL file and before that write (or any other,
// the writer leading RocksDB's write queue) reaches the new file; so every
// WAL file but the newest is synced before the newest takes a record, and
// only the newest ever holds unsynced records.
//
// A sync that fails is kept: an append whose write succeeded after it may
// sit in a WAL file behind records that were never synced, and must fail.
//
// Thread safety: every member may be called from any thread; attach()
// waits for a sync in progress.
class WalSealSync final : public rocksdb::EventListener {
 public:
  const char* Name() const override { return "parley.WalSealSync"; }

  // Syncs `db`'s WAL files at every seal from now on; nullptr stops it,
  // and must come before `db` closes.
  void attach(rocksdb::DB* db);
  // The first sync that failed, if one did.
  std::optional<rocksdb::Status> failure() const;

  void OnMemTableSealed(const rocksdb::MemTableInfo& info) override;

 private:
  mutable Mutex mutex_;
  rocksdb::DB* db_ GUARDED_BY(mutex_) = nullptr;
  std::optional<rocksdb::Status> failure_ GUARDED_BY(mutex_);
};

// Follows the log sequences of the write batches RocksDB replays from the
// WAL files when it opens a store, and stops the open, reporting a
// corruption, at the first batch that does not continue the one replayed
// before it (appends are numbered densely and written in order, so
// consecutive batches in the WAL files always continue each other). The
// first batch is not checked: it may follow records already in table
// files.
//
// One instance per DB::Open; it must outlive the DB it was passed to in
// DBOptions::wal_filter. Called by RocksDB on the opening thread only.
class LogReplayCheck final : public rocksdb::WalFilter {
 public:
  const char* Name() const override { return "parley.LogReplayCheck"; }

  // How the first batch that broke the sequence broke it, e.g. "the
  // RocksDB WAL files skip log sequences 12..40 from WAL file #9 to WAL
  // file #14 (…)"; nullopt if none did.
  const std::optional<std::string>& gap() const { return gap_; }

  void ColumnFamilyLogNumberMap(
      const std::map<std::uint32_t, std::uint64_t>& cf_lognumber_map,
      const std::map<std::string, std::uint32_t>& cf_name_id_map) override;
  WalProcessingOption LogRecordFound(unsigned long long log_number,
                                     const std::string& log_file_name,
                                     const rocksdb::WriteBatch& batch,
                                     rocksdb::WriteBatch* new_batch,
                                     bool* batch_changed) override;

 private:
  std::optional<std::uint32_t> log_family_;  // the id of the log family
  std::uint64_t last_ = 0;      // the newest log sequence replayed; 0: none
  std::uint64_t last_wal_ = 0;  // the WAL file that held it
  std::optional<std::string> gap_;
};

}  // namespace parley::log::rocksdb_backend
