#include "log/rocksdb_database.h"

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

#include <algorithm>
#include <mutex>
#include <set>

#include "log/record_check.h"
#include "log/rocksdb_append_memtable.h"
#include "log/rocksdb_channel_memtable.h"
#include "log/rocksdb_layout.h"
#include "schemas/record.h"

namespace parley::log::rocksdb_backend {
namespace {

namespace layout = rocksdb_layout;

// RocksDB's default family is "default" (rocksdb::kDefaultColumnFamilyName).
constexpr std::string_view kFamilyNames[] = {
    "default", layout::kLogFamily, layout::kChannelIndexFamily,
    layout::kIdempotencyFamily, layout::kMetaFamily};
static_assert(std::size(kFamilyNames) == kFamilies);

}  // namespace

std::vector<rocksdb::ColumnFamilyDescriptor> families(
    std::size_t write_buffer_size) {
  // Every table file is checked with XXH3 block checksums (RocksDB 7.8's
  // default, set here because rocksdb_table_check.h reads only those).
  rocksdb::BlockBasedTableOptions checked;
  checked.checksum = rocksdb::kXXH3;
  // One block cache for every family, so what reads may keep is bounded
  // by one figure (a table factory without a cache makes its own).
  checked.block_cache = rocksdb::NewLRUCache(kBlockCacheBytes);
  rocksdb::ColumnFamilyOptions plain;
  plain.level_compaction_dynamic_level_bytes = true;
  plain.table_factory.reset(rocksdb::NewBlockBasedTableFactory(checked));
  if (write_buffer_size > 0) plain.write_buffer_size = write_buffer_size;
  rocksdb::ColumnFamilyOptions point_lookups = plain;
  rocksdb::BlockBasedTableOptions table = checked;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  point_lookups.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // The log is read in long sequential scans (hydrate, replay): big blocks,
  // LZ4 (cheap to decode) rather than Snappy on 4 KiB blocks.
  rocksdb::ColumnFamilyOptions sequential = plain;
  rocksdb::BlockBasedTableOptions scans = checked;
  scans.block_size = 64 << 10;
  sequential.table_factory.reset(rocksdb::NewBlockBasedTableFactory(scans));
  sequential.compression = rocksdb::kLZ4Compression;
  // The log's keys always go at the end: its memtable appends.
  sequential.memtable_factory = make_append_memtable_factory();
  // Each channel's index keys go after its last: its memtable appends per
  // channel.
  rocksdb::ColumnFamilyOptions channel_index = plain;
  channel_index.memtable_factory = make_channel_memtable_factory();
  const rocksdb::ColumnFamilyOptions by_family[] = {
      plain, sequential, channel_index, point_lookups, plain};
  std::vector<rocksdb::ColumnFamilyDescriptor> out;
  for (int family = 0; family < kFamilies; ++family) {
    out.emplace_back(std::string(kFamilyNames[family]), by_family[family]);
  }
  return out;
}

bool is_family_name(std::string_view name) {
  return std::ranges::find(kFamilyNames, name) != std::end(kFamilyNames);
}

namespace {

std::mutex held_mutex;
std::set<std::filesystem::path> held;  // guarded by held_mutex

std::filesystem::path identity(const std::filesystem::path& directory) {
  std::error_code ignored;
  return std::filesystem::weakly_canonical(directory, ignored);
}

}  // namespace

bool held_by_this_process(const std::filesystem::path& directory) {
  const std::lock_guard lock(held_mutex);
  return held.contains(identity(directory));
}

rocksdb::Status Database::close() {
  if (!db) return rocksdb::Status::OK();
  if (!locked_directory.empty()) {
    const std::lock_guard lock(held_mutex);
    held.erase(locked_directory);
    locked_directory.clear();
  }
  if (wal_seal_sync) wal_seal_sync->attach(nullptr);
  for (auto* handle : families) db->DestroyColumnFamilyHandle(handle);
  families.clear();
  rocksdb::Status status = db->Close();
  db.reset();
  return status;
}

bool first_read_failed(const rocksdb::Status& status) {
  return status.IsInvalidArgument() &&
         status.ToString().find("Direct I/O is not supported") !=
             std::string::npos;
}

namespace {

rocksdb::Status open_database_once(const std::filesystem::path& directory,
                                   rocksdb::Options options, bool seal_sync,
                                   Database& database) {
  rocksdb::DB* db = nullptr;
  database.families.clear();
  database.replay_check = std::make_unique<LogReplayCheck>();
  options.wal_filter = database.replay_check.get();
  database.wal_seal_sync.reset();
  if (seal_sync) {
    database.wal_seal_sync = std::make_shared<WalSealSync>();
    options.listeners.push_back(database.wal_seal_sync);
  }
  rocksdb::Status status = rocksdb::DB::Open(
      options, directory.string(), families(options.write_buffer_size),
      &database.families, &db);
  database.db.reset(db);
  if (status.ok()) {
    database.locked_directory = identity(directory);
    const std::lock_guard lock(held_mutex);
    held.insert(database.locked_directory);
  }
  // Before anything is written: the first write may seal a memtable.
  if (database.wal_seal_sync && db != nullptr) {
    database.wal_seal_sync->attach(db);
  }
  return status;
}

}  // namespace

rocksdb::Status open_database(const std::filesystem::path& directory,
                              rocksdb::Options options, bool seal_sync,
                              Database& database) {
  rocksdb::Status status =
      open_database_once(directory, options, seal_sync, database);
  if (!first_read_failed(status)) return status;
  return open_database_once(directory, options, seal_sync, database);
}

Result<std::uint64_t> find_last_sequence(const Database& database) {
  std::unique_ptr<rocksdb::Iterator> it(
      database.db->NewIterator(rocksdb::ReadOptions(), database[kLog]));
  it->SeekToLast();
  if (!it->status().ok()) return io_error("reading the log", it->status());
  if (!it->Valid()) return 0;
  auto sequence = layout::decode_be64(view(it->key()));
  if (!sequence) {
    return std::unexpected(
        Error{ErrorCode::kCorruption, "the newest log key is malformed"});
  }
  std::vector<std::uint64_t> scratch;
  if (auto checked = check_record(
          schema::aligned_record(view(it->value()), scratch), *sequence);
      !checked) {
    return std::unexpected(checked.error());
  }
  // Appends are numbered from this one. RocksDB 7.8's iterator can pass over
  // a table file whose block it failed to read, its status OK: the record
  // after it must be absent, or appends would overwrite records.
  rocksdb::PinnableSlice next;
  rocksdb::Status status =
      database.db->Get(rocksdb::ReadOptions(), database[kLog],
                       layout::encode_be64(*sequence + 1), &next);
  if (status.ok()) {
    return std::unexpected(
        Error{ErrorCode::kIoError,
              "reading the log: its last record read as log sequence " +
                  std::to_string(*sequence) + ", yet " +
                  std::to_string(*sequence + 1) +
                  " exists (a read error passed over)"});
  }
  if (!status.IsNotFound()) return io_error("reading the log", status);
  return *sequence;
}

Result<bool> check_format_version(Database& database, bool empty_log) {
  std::string version;
  rocksdb::Status status =
      database.db->Get(rocksdb::ReadOptions(), database[kMeta],
                       slice(layout::kFormatVersionKey), &version);
  if (status.ok()) {
    if (version == layout::kFormatVersion) return false;
    if (!layout::readable_format_version(version)) {
      return std::unexpected(Error{
          ErrorCode::kVersionMismatch,
          "store format version " + version + ", this build reads versions " +
              std::string(layout::kOldestFormatVersion) + " to " +
              std::string(layout::kFormatVersion)});
    }
    return true;
  }
  if (!status.IsNotFound()) {
    return io_error("reading the format version", status);
  }
  if (!empty_log) {
    return std::unexpected(
        Error{ErrorCode::kCorruption,
              "the store has records but no format version: the meta column "
              "family lost its table file (a damaged MANIFEST entry or table "
              "file)"});
  }
  return true;
}

Result<void> write_format_version(Database& database) {
  rocksdb::WriteOptions sync;
  sync.sync = true;
  rocksdb::Status status =
      database.db->Put(sync, database[kMeta], slice(layout::kFormatVersionKey),
                       slice(layout::kFormatVersion));
  if (!status.ok()) return io_error("writing the format version", status);
  return {};
}

std::optional<Error> foreign_database(const std::filesystem::path& directory,
                                      const std::vector<std::string>& names) {
  if (std::ranges::find(names, layout::kMetaFamily) != names.end()) {
    return std::nullopt;
  }
  return Error{ErrorCode::kCorruption,
               directory.string() +
                   " is a RocksDB database but not a Parley store (no '" +
                   std::string(layout::kMetaFamily) + "' column family)"};
}

Result<bool> creation_cut_short(const std::filesystem::path& directory,
                                const std::vector<std::string>& names,
                                const rocksdb::Options& options) {
  if (!std::ranges::all_of(names, is_family_name)) return false;
  std::vector<rocksdb::ColumnFamilyDescriptor> present;
  for (const std::string& name : names) present.emplace_back(name, options);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status status = rocksdb::DB::OpenForReadOnly(
      options, directory.string(), present, &handles, &raw);
  if (!status.ok()) return io_error("opening " + directory.string(), status);
  std::unique_ptr<rocksdb::DB> db(raw);
  bool empty = true;
  for (auto* handle : handles) {
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), handle));
    it->SeekToFirst();
    if (it->Valid() || !it->status().ok()) empty = false;
    db->DestroyColumnFamilyHandle(handle);
  }
  return empty;
}

std::unexpected<Error> error_of(ErrorCode code, const std::string& context,
                                const rocksdb::Status& status) {
  return std::unexpected(Error{code, context + ": " + status.ToString()});
}

std::unexpected<Error> io_error(const std::string& context,
                                const rocksdb::Status& status) {
  const ErrorCode code = status.IsCorruption() ? ErrorCode::kCorruption
                         : status.IsNoSpace()  ? ErrorCode::kNoSpace
                                               : ErrorCode::kIoError;
  return error_of(code, context, status);
}

}  // namespace parley::log::rocksdb_backend
