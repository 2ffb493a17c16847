// Internal to the RocksDB backend: the open database with its column
// family handles, the families' options, and RocksDB statuses as errors.
// Key layout: log/rocksdb_layout.h.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "log/error.h"
#include "log/rocksdb_wal_order.h"

namespace parley::log::rocksdb_backend {

// Column family handles, in the order of families().
enum Family { kDefault, kLog, kChannelIndex, kIdempotency, kMeta, kFamilies };

// The block cache every family of one open database shares.
inline constexpr std::size_t kBlockCacheBytes = 32 << 20;

// Every column family of a Parley store with its options, by Family;
// memtables of `write_buffer_size` bytes (0: RocksDB's default); one
// block cache of kBlockCacheBytes, new for each call. Their memtables take
// inserts from one thread at a time: a database opened with them needs
// DBOptions::allow_concurrent_memtable_write off.
std::vector<rocksdb::ColumnFamilyDescriptor> families(
    std::size_t write_buffer_size = 0);

// Whether `name` is the name of one of families().
bool is_family_name(std::string_view name);

// Owns the DB and its column family handles; handles are released before
// the DB closes. Also owns what the DB was opened with and must outlive it
// (declared first, so destroyed last): the replay check passed to
// DB::Open, and the WAL seal sync it runs, if any (detached before the DB
// closes).
struct Database {
  // The directory of a read-write open while it is open (its LOCK is
  // held by this process); empty otherwise.
  std::filesystem::path locked_directory;
  std::unique_ptr<LogReplayCheck> replay_check;
  std::shared_ptr<WalSealSync> wal_seal_sync;
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> families;

  Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&&) = default;
  Database& operator=(Database&&) = default;
  ~Database() { (void)close(); }

  rocksdb::ColumnFamilyHandle* operator[](Family family) const {
    return families[family];
  }

  rocksdb::Status close();
};

// Whether this process holds the store in `directory` open read-write.
// POSIX record locks belong to a process, and closing any descriptor of
// the file releases them all, so nothing may probe the LOCK file of a
// store this process holds (store_is_locked asks this first).
bool held_by_this_process(const std::filesystem::path& directory);

// Whether RocksDB refused an open because its first read of CURRENT (or
// the MANIFEST) failed and a second read passed: it then reports "Direct
// I/O is not supported by the specified DB" (InvalidArgument), though no
// store is opened for direct I/O. A transient read error: open again.
bool first_read_failed(const rocksdb::Status& status);

// Opens the store in `directory` read-write with every family of
// families(options.write_buffer_size) (creating what `options` allows),
// replaying its WAL files through a fresh LogReplayCheck (kept in
// `database`, whether the open succeeds or not), and, if `seal_sync`,
// syncing every WAL file whenever a memtable is sealed (WalSealSync).
// Opens again once after first_read_failed().
rocksdb::Status open_database(const std::filesystem::path& directory,
                              rocksdb::Options options, bool seal_sync,
                              Database& database);

// The newest record's log sequence (0 for an empty log). The record's key
// and stamp must agree; a full check is `parley audit`'s job.
Result<std::uint64_t> find_last_sequence(const Database& database);

// Checks the store's format version: whether a writer must write this
// build's (write_format_version) before it appends: a store of an older
// format it reads, or one without a version whose log is empty
// (`empty_log`: it was created but never written).
Result<bool> check_format_version(Database& database, bool empty_log);
// Writes this build's format version, synced.
Result<void> write_format_version(Database& database);

// Refuses a directory that holds a RocksDB database without the families
// of a Parley store; nullopt when they are all there. `names` are the
// database's column families.
std::optional<Error> foreign_database(const std::filesystem::path& directory,
                                      const std::vector<std::string>& names);

// Whether the database in `directory`, with column families `names` and
// no meta family, is a Parley store whose creation a crash cut short:
// every family one of Parley's and every one of them empty. RocksDB makes
// a database exist before it adds Parley's families and Parley writes the
// format version, so such a store never held a record.
Result<bool> creation_cut_short(const std::filesystem::path& directory,
                                const std::vector<std::string>& names,
                                const rocksdb::Options& options);

// `code` with "<context>: <status>".
std::unexpected<Error> error_of(ErrorCode code, const std::string& context,
                                const rocksdb::Status& status);
// kCorruption when `status` is a corruption, kNoSpace when the disk is
// full, kIoError otherwise.
std::unexpected<Error> io_error(const std::string& context,
                                const rocksdb::Status& status);

inline std::string_view view(const rocksdb::Slice& slice) {
  return {slice.data(), slice.size()};
}

inline rocksdb::Slice slice(std::string_view bytes) {
  return {bytes.data(), bytes.size()};
}

}  // namespace parley::log::rocksdb_backend
