// Opening a RocksDB store read-write: creating it, recovering its WAL, and
// naming the damage that makes it unreadable.
//
// Creation is atomic as users see it. RocksDB makes a database exist (its
// CURRENT file) before Parley's column families and format version are
// written, so a crash in between leaves a database with some of Parley's
// families, all of them empty, and no format version. Such a store holds no
// record and was never used: opening it completes the creation.
#include <rocksdb/db.h>
#include <rocksdb/listener.h>

#include <algorithm>

#include "log/rocksdb_clean_close.h"
#include "log/rocksdb_info_log.h"
#include "log/rocksdb_layout.h"
#include "log/rocksdb_log_store.h"
#include "log/rocksdb_manifest_check.h"
#include "log/rocksdb_store.h"
#include "log/rocksdb_table_check.h"

namespace parley::log {
namespace {

using namespace rocksdb_backend;
namespace fs = std::filesystem;

// Keeps RocksDB from resuming writes by itself after a background error
// (after a full disk, its file manager would poll for space and resume):
// the store resumes only in LogStore::resume(), where a hub rebuilds its
// state, and a manual resume never finds an automatic one in progress.
class NoAutomaticRecovery final : public rocksdb::EventListener {
 public:
  const char* Name() const override { return "parley.NoAutomaticRecovery"; }
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status,
                            bool* auto_recovery) override {
    *auto_recovery = false;
  }
};

rocksdb::Options base_options(const RocksDbOptions& store_options) {
  rocksdb::Options options;
  options.listeners.push_back(std::make_shared<NoAutomaticRecovery>());
  options.max_background_jobs = 2;
  options.keep_log_file_num = 4;
  options.allow_concurrent_memtable_write = false;  // see families()
  // Async appends leave the WAL to the kernel, and every memtable seal
  // syncs it whole (WalSealSync), holding up every append behind it: the
  // kernel is asked to start writing back each MiB as it is written
  // (without waiting), so the seal's sync has about a MiB left to write.
  // Synced appends leave nothing to it.
  if (store_options.durability == Durability::kAsync) {
    options.wal_bytes_per_sync = 1 << 20;
  }
  if (store_options.write_buffer_size > 0) {
    options.write_buffer_size = store_options.write_buffer_size;
  }
  if (store_options.env != nullptr) options.env = store_options.env;
  return options;
}

// The file RocksDB names in `message` as unreadable, if it names a table
// file ("…/000029.sst …").
std::optional<std::string> table_file_named(std::string_view message) {
  const std::size_t suffix = message.find(".sst");
  if (suffix == std::string_view::npos) return std::nullopt;
  std::size_t start = suffix;
  while (start > 0 && message[start - 1] >= '0' && message[start - 1] <= '9') {
    --start;
  }
  if (start == suffix) return std::nullopt;
  return std::string(message.substr(start, suffix + 4 - start));
}

// Why RocksDB refused to open `directory` with `status` (a corruption),
// naming what is damaged and what happened: nothing. `gap`: how the WAL
// files skip log sequences, when that is what stopped the open.
// `clean_close`: the last log sequence of the store's clean-close mark.
Error damage_refusal(const fs::path& directory, const rocksdb::Status& status,
                     const std::optional<std::string>& gap,
                     std::optional<std::uint64_t> clean_close) {
  const std::string detail = status.ToString();
  std::string what;
  if (gap) {
    what = *gap;
  } else if (auto table = table_file_named(detail)) {
    what = "the table file " + *table + " is damaged";
  } else if (detail.find("MANIFEST") != std::string::npos) {
    what = "the MANIFEST (RocksDB's list of the store's files) is damaged";
  } else if (clean_close) {
    what =
        "the RocksDB WAL is damaged (the store was closed cleanly at log "
        "sequence " +
        std::to_string(*clean_close) +
        ", so a damaged record at its end is not a torn tail)";
  } else {
    what = "the RocksDB WAL is damaged before its end";
  }
  return Error{ErrorCode::kCorruption,
               "refusing to open " + directory.string() + ": " + what + " (" +
                   detail + "); nothing was changed or dropped"};
}

// Whether `directory` needs creating: kNotFound when it does and may not,
// kCorruption when it holds a database that is not a Parley store.
Result<bool> needs_creating(const fs::path& directory,
                            const RocksDbOptions& store_options) {
  std::error_code ignored;
  if (!fs::exists(directory / "CURRENT", ignored)) {
    if (!store_options.create_if_missing) {
      return std::unexpected(Error{ErrorCode::kNotFound,
                                   "no Parley store at " + directory.string()});
    }
    return true;
  }
  const rocksdb::Options options = base_options(store_options);
  std::vector<std::string> names;
  rocksdb::Status listed =
      rocksdb::DB::ListColumnFamilies(options, directory.string(), &names);
  if (!listed.ok()) return io_error("opening " + directory.string(), listed);
  auto foreign = foreign_database(directory, names);
  if (!foreign) return false;
  auto cut_short = creation_cut_short(directory, names, options);
  if (!cut_short) return std::unexpected(cut_short.error());
  if (!*cut_short) return std::unexpected(std::move(*foreign));
  return true;
}

}  // namespace

namespace rocksdb_backend {

Result<Database> open_recovering(const fs::path& directory,
                                 const RocksDbOptions& store_options,
                                 bool creating, RecoveryReport& report,
                                 std::optional<std::uint64_t> clean_close) {
  rocksdb::Options options = base_options(store_options);
  options.info_log = make_info_log(directory);
  options.create_if_missing = creating;
  options.create_missing_column_families = creating;
  // First strict: any WAL damage fails. Then, only if that found
  // corruption, tolerate an incomplete tail: if the second open succeeds
  // the damage was a torn tail; if it fails too, it is damage before the
  // end of the WAL or in another file. Either way, WAL files that skip log
  // sequences (rocksdb_wal_order.h) fail.
  Database database;
  // Async appends leave the WAL unsynced: it is synced when RocksDB moves
  // to a new WAL file, before that file takes a record.
  const bool seal_sync = store_options.durability == Durability::kAsync;
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kAbsoluteConsistency;
  rocksdb::Status strict =
      open_database(directory, options, seal_sync, database);
  if (strict.ok()) return database;
  if (strict.IsIOError() && store_is_locked(directory)) {
    return std::unexpected(
        Error{ErrorCode::kBusy, directory.string() +
                                    " is locked by another process (" +
                                    strict.ToString() + ")"});
  }
  if (!strict.IsCorruption()) {
    return io_error("opening " + directory.string(), strict);
  }
  if (clean_close) {
    return std::unexpected(damage_refusal(
        directory, strict, database.replay_check->gap(), clean_close));
  }
  options.wal_recovery_mode =
      rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  rocksdb::Status tolerant =
      open_database(directory, options, seal_sync, database);
  if (!tolerant.ok()) {
    return std::unexpected(damage_refusal(
        directory, tolerant, database.replay_check->gap(), std::nullopt));
  }
  report.torn_tail = true;
  report.detail = strict.ToString();
  return database;
}

Result<Database> open_read_view(const fs::path& directory,
                                const RocksDbOptions& store_options) {
  rocksdb::Options options = base_options(store_options);
  options.wal_recovery_mode =
      rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  Database database;
  database.replay_check = std::make_unique<LogReplayCheck>();
  options.wal_filter = database.replay_check.get();
  rocksdb::DB* db = nullptr;
  rocksdb::Status status;
  for (int attempt = 0; attempt < 2; ++attempt) {
    status = rocksdb::DB::OpenForReadOnly(options, directory.string(),
                                          families(options.write_buffer_size),
                                          &database.families, &db);
    if (!first_read_failed(status)) break;
  }
  database.db.reset(db);
  if (!status.ok()) {
    return io_error("opening " + directory.string() + " to read", status);
  }
  return database;
}

}  // namespace rocksdb_backend

Result<OpenedLogStore> open_rocksdb_log_store(const fs::path& directory,
                                              const RocksDbOptions& options) {
  rocksdb::Env& env =
      options.env != nullptr ? *options.env : *rocksdb::Env::Default();
  // Before RocksDB reads anything (listing the column families reads the
  // MANIFEST). A store another process holds has no mark, and its files
  // may be half written, which these checks pass over; it is refused as
  // busy below. (No store_is_locked() probe here: closing the probe's
  // descriptor would release a lock this process holds on the store.)
  std::optional<std::uint64_t> clean_close;
  {
    auto refused = [&](const Error& error) {
      return std::unexpected(Error{
          error.code, "refusing to open " + directory.string() + ": " +
                          error.message + "; nothing was changed or dropped"});
    };
    if (auto tables = check_table_files(directory); !tables) {
      return refused(tables.error());
    }
    auto mark = read_clean_close(env, directory);
    if (!mark) return std::unexpected(mark.error());
    if (*mark) clean_close = (*mark)->last_sequence;
    // What a clean close synced of the MANIFEST cannot end mid-record
    // either.
    if (auto manifest = check_manifest(directory, closed_manifest(*mark));
        !manifest) {
      return refused(manifest.error());
    }
  }
  auto creating = needs_creating(directory, options);
  if (!creating) return std::unexpected(creating.error());
  RecoveryReport report{.created = *creating};
  auto database =
      open_recovering(directory, options, *creating, report, clean_close);
  if (!database) return std::unexpected(database.error());
  auto last = find_last_sequence(*database);
  if (!last) return std::unexpected(last.error());
  if (clean_close && *last < *clean_close) {
    return std::unexpected(Error{
        ErrorCode::kCorruption,
        "refusing to open " + directory.string() +
            ": it was closed cleanly at log sequence " +
            std::to_string(*clean_close) +
            ", but its files hold records "
            "only up to " +
            std::to_string(*last) + ": log sequences " +
            std::to_string(*last + 1) + ".." + std::to_string(*clean_close) +
            " are lost (RocksDB dropped them as an incomplete MANIFEST or "
            "WAL tail, so one of those files is damaged)"});
  }
  auto version = check_format_version(*database, *last == 0);
  if (!version) return std::unexpected(version.error());
  // Before the first append (the format version's included): a crash from
  // here on may tear the WAL's end, which the mark would call damage.
  if (clean_close) {
    if (auto removed = remove_clean_close(env, directory); !removed) {
      return std::unexpected(removed.error());
    }
  }
  if (*version) {
    if (auto written = write_format_version(*database); !written) {
      return std::unexpected(written.error());
    }
  }
  return OpenedLogStore{
      std::make_unique<RocksDbLogStore>(std::move(*database), directory,
                                        options, *last, /*read_only=*/false),
      std::move(report)};
}

}  // namespace parley::log
