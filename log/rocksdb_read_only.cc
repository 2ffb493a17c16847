// Opening a RocksDB store read-only, beside a live hub that may hold it:
// a RocksDB secondary instance, checked so that damage never looks like
// the end of the data.
//
// A secondary that meets a table file failing its checks while it replays
// the MANIFEST does not fail: it silently shows the store as it was before
// that file was added, so whole stretches of the log would be missing
// while every read succeeds. Opening therefore checks every table file the
// secondary does not use, and refuses the store when one is damaged.
#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/sst_file_reader.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>

#include "log/rocksdb_clean_close.h"
#include "log/rocksdb_log_store.h"
#include "log/rocksdb_manifest_check.h"
#include "log/rocksdb_store.h"
#include "log/rocksdb_table_check.h"
#include "log/rocksdb_wal_check.h"

namespace parley::log {
namespace {

using namespace rocksdb_backend;
namespace fs = std::filesystem;

// A read-only view keeps no log of its own, so it writes nothing anywhere:
// RocksDB 7's secondary uses its own directory only for its info log.
class SilentLogger final : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  void Logv(const char*, va_list) override {}
};

// The table files in `directory` that `database` does not use and that
// fail their checks, as "<file> (<why>)".
std::vector<std::string> damaged_unused_tables(const fs::path& directory,
                                               const Database& database) {
  std::vector<rocksdb::LiveFileMetaData> live;
  database.db->GetLiveFilesMetaData(&live);
  std::set<std::uint64_t> used;
  for (const auto& file : live) used.insert(file.file_number);
  std::vector<std::string> damaged;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    const fs::path& path = entry.path();
    if (path.extension() != ".sst") continue;
    std::uint64_t number = 0;
    try {
      number = std::stoull(path.stem().string());
    } catch (const std::exception&) {
      continue;  // not a RocksDB table file name
    }
    if (used.contains(number)) continue;
    rocksdb::SstFileReader reader{rocksdb::Options()};
    rocksdb::Status status = reader.Open(path.string());
    if (status.ok()) status = reader.VerifyChecksum();
    std::error_code gone;
    if (!status.ok() && fs::exists(path, gone)) {
      damaged.push_back(path.filename().string() + " (" + status.ToString() +
                        ")");
    }
  }
  return damaged;
}

// Refuses the view when a table file it does not use is damaged. A live
// primary may be writing a new table file (not yet in the MANIFEST, not
// yet readable) or deleting an obsolete one: a file is only called
// damaged when it still fails after the view caught up, three times over.
Result<void> check_unused_tables(const fs::path& directory,
                                 const Database& database) {
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    std::vector<std::string> damaged =
        damaged_unused_tables(directory, database);
    if (damaged.empty()) return {};
    if (attempt == kAttempts) {
      std::string files;
      for (const std::string& file : damaged) {
        files += (files.empty() ? "" : ", ") + file;
      }
      return std::unexpected(Error{
          ErrorCode::kCorruption,
          "the store at " + directory.string() +
              " cannot be read in full: table file " + files +
              " is damaged; nothing was read, so nothing is shown as if it "
              "were the whole store"});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    (void)database.db->TryCatchUpWithPrimary();
  }
}

// Whether a secondary's open failed on a MANIFEST that is gone: a writer
// opened the store between the secondary's read of CURRENT and its read of
// the MANIFEST CURRENT named, and replaced it. Opening again reads the new
// one.
bool manifest_replaced(const fs::path& directory,
                       const rocksdb::Status& status) {
  if (status.ok()) return false;
  const std::string text = status.ToString();
  const std::size_t at = text.find("MANIFEST-");
  if (at == std::string::npos) return false;
  const std::size_t end = text.find_first_not_of("0123456789", at + 9);
  std::error_code ignored;
  return !fs::exists(directory / text.substr(at, end - at), ignored);
}

}  // namespace

namespace {

// One attempt at the read-only open: the view, or nullopt when a writer
// opened the store meanwhile and the attempt must be made again (its
// MANIFEST replaced, or a check that holds only for a closed store made
// while the writer was opening it). A failed check of that kind is taken
// as damage only when `final`: damage fails every attempt, a writer's
// opening does not.
Result<std::optional<std::unique_ptr<LogStore>>> open_read_only_once(
    const fs::path& directory, const rocksdb::Options& options, bool final) {
  using Again = std::optional<std::unique_ptr<LogStore>>;
  // A clean-close mark says the store is closed (a writer removes it once
  // it has opened), so its MANIFEST must be whole and its records reach
  // the mark's: a secondary reads the MANIFEST as a file still growing and
  // may wait forever on a damaged end. While a writer holds the store, or
  // opens it during this attempt, those checks do not hold: the mark may
  // be a leftover of the writer's own opening.
  const bool locked = store_is_locked(directory);
  std::optional<CleanClose> mark;
  if (!locked) {
    auto read = read_clean_close(*rocksdb::Env::Default(), directory);
    if (!read) return std::unexpected(read.error());
    mark = *read;
  }
  // Whether a writer opened the store since the mark was read: it holds
  // it now, or it has closed it again, marking it anew.
  auto writer_came = [&] {
    if (!final) return true;
    if (locked || store_is_locked(directory)) return !locked;
    auto now = read_clean_close(*rocksdb::Env::Default(), directory);
    return !now || *now != mark;
  };
  if (auto manifest = check_manifest(directory, closed_manifest(mark));
      !manifest) {
    if (writer_came()) return Again();
    return std::unexpected(manifest.error());
  }
  // A live writer never writes such a record: no retry.
  if (auto wal = check_wal_record_types(directory); !wal) {
    return std::unexpected(wal.error());
  }
  Database database;
  rocksdb::DB* db = nullptr;
  // With an info log given, RocksDB 7 never touches the secondary path.
  rocksdb::Status status = rocksdb::DB::OpenAsSecondary(
      options, directory.string(), /*secondary_path=*/"", families(),
      &database.families, &db);
  database.db.reset(db);
  if (manifest_replaced(directory, status)) return Again();
  if (!status.ok()) {
    return io_error("opening " + directory.string() + " read-only", status);
  }
  if (auto tables = check_unused_tables(directory, database); !tables) {
    return std::unexpected(tables.error());
  }
  auto last = find_last_sequence(database);
  if (!last) return std::unexpected(last.error());
  // A closed store is checked against its clean-close mark as the next
  // read-write open will check it.
  if (mark && *last < mark->last_sequence) {
    if (writer_came()) return Again();
    const std::string marked = std::to_string(mark->last_sequence);
    return std::unexpected(Error{
        ErrorCode::kCorruption,
        "the store at " + directory.string() +
            " was closed cleanly at log sequence " + marked +
            ", but its files hold records only up to " + std::to_string(*last) +
            ": log sequences " + std::to_string(*last + 1) + ".." + marked +
            " are lost (an incomplete MANIFEST or WAL tail: one of those "
            "files is damaged)"});
  }
  // A view taken while a writer was opening the store may show the log's
  // records without the meta family's table file yet. A writer holding the
  // store has passed this check itself, so while one does it is transient.
  if (auto version = check_format_version(database, *last == 0); !version) {
    if (version.error().code == ErrorCode::kCorruption &&
        (store_is_locked(directory) || writer_came())) {
      return Again();
    }
    return std::unexpected(version.error());
  }
  return std::make_unique<RocksDbLogStore>(std::move(database), directory,
                                           RocksDbOptions{}, *last,
                                           /*read_only=*/true);
}

}  // namespace

Result<std::unique_ptr<LogStore>> open_rocksdb_log_store_read_only(
    const fs::path& directory) {
  std::error_code ignored;
  if (!fs::exists(directory / "CURRENT", ignored)) {
    return std::unexpected(Error{ErrorCode::kNotFound,
                                 "no Parley store at " + directory.string()});
  }
  rocksdb::Options options;
  options.max_open_files = -1;                      // required of a secondary
  options.allow_concurrent_memtable_write = false;  // see families()
  // Each catch-up that applies a new version starts
  // max_file_opening_threads - 1 threads (15 with the default of 16) to
  // open its table files, and joins them, even when no file is new: a
  // follower of a hub that flushes often started 800 threads a second.
  // With 1, the catching-up thread opens them itself.
  options.max_file_opening_threads = 1;
  options.info_log = std::make_shared<SilentLogger>();
  std::vector<std::string> names;
  rocksdb::Status listed =
      rocksdb::DB::ListColumnFamilies(options, directory.string(), &names);
  if (!listed.ok()) return io_error("opening " + directory.string(), listed);
  if (auto foreign = foreign_database(directory, names)) {
    auto cut_short = creation_cut_short(directory, names, options);
    if (!cut_short) return std::unexpected(cut_short.error());
    if (!*cut_short) return std::unexpected(std::move(*foreign));
    return std::unexpected(
        Error{ErrorCode::kNotFound,
              "no Parley store at " + directory.string() +
                  ": its creation was cut short before it held anything (the "
                  "next read-write open completes it)"});
  }
  if (auto tables = check_table_files(directory); !tables) {
    return std::unexpected(tables.error());
  }
  // A writer reopening the store again and again could keep this busy;
  // each of its opens takes milliseconds, so a few attempts suffice. The
  // checks of a closed store are final from the third on.
  constexpr int kAttempts = 10;
  constexpr int kFinalFrom = 3;
  for (int attempt = 1;; ++attempt) {
    auto opened =
        open_read_only_once(directory, options, attempt >= kFinalFrom);
    if (!opened) return std::unexpected(opened.error());
    if (*opened) return std::move(**opened);
    if (attempt == kAttempts) {
      return std::unexpected(
          Error{ErrorCode::kBusy,
                "opening " + directory.string() +
                    " read-only: a writer kept reopening the store (" +
                    std::to_string(kAttempts) + " attempts)"});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool store_is_locked(const fs::path& directory) {
  if (held_by_this_process(directory)) return true;
  const int fd = ::open((directory / "LOCK").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  // An open file description lock only asks: it takes nothing, and it sees
  // the process-owned lock RocksDB holds in another process.
  const bool locked =
      ::fcntl(fd, F_OFD_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  ::close(fd);
  return locked;
}

Result<std::optional<std::string>> find_torn_wal_tail(
    const fs::path& directory) {
  if (store_is_locked(directory)) return std::nullopt;
  if (auto tables = check_table_files(directory); !tables) {
    return std::unexpected(tables.error());
  }
  auto mark = read_clean_close(*rocksdb::Env::Default(), directory);
  if (!mark) return std::unexpected(mark.error());
  if (auto manifest = check_manifest(directory, closed_manifest(*mark));
      !manifest) {
    return std::unexpected(manifest.error());
  }
  std::vector<std::string> names;
  rocksdb::Options options;
  options.info_log = std::make_shared<SilentLogger>();
  rocksdb::Status listed =
      rocksdb::DB::ListColumnFamilies(options, directory.string(), &names);
  if (!listed.ok()) return io_error("opening " + directory.string(), listed);
  std::unique_ptr<LogReplayCheck> check;
  auto open_with = [&](rocksdb::WALRecoveryMode mode) {
    check = std::make_unique<LogReplayCheck>();
    options.wal_recovery_mode = mode;
    options.wal_filter = check.get();
    std::vector<rocksdb::ColumnFamilyDescriptor> present;
    for (const std::string& name : names) present.emplace_back(name, options);
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    rocksdb::Status status = rocksdb::DB::OpenForReadOnly(
        options, directory.string(), present, &handles, &raw);
    std::unique_ptr<rocksdb::DB> db(raw);
    for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
    return status;
  };
  rocksdb::Status strict =
      open_with(rocksdb::WALRecoveryMode::kAbsoluteConsistency);
  if (strict.ok()) return std::nullopt;
  if (!strict.IsCorruption()) {
    return io_error("reading the WAL of " + directory.string(), strict);
  }
  rocksdb::Status tolerant =
      open_with(rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords);
  if (!tolerant.ok() && check->gap()) {
    return std::unexpected(Error{
        ErrorCode::kCorruption,
        "reading the WAL of " + directory.string() + ": " + *check->gap()});
  }
  if (!tolerant.ok()) {
    return io_error("reading the WAL of " + directory.string(), tolerant);
  }
  if (*mark) {
    return std::unexpected(
        Error{ErrorCode::kCorruption,
              "reading the WAL of " + directory.string() +
                  ": it ends with a damaged record (" + strict.ToString() +
                  "), although the store was closed cleanly at log sequence " +
                  std::to_string((*mark)->last_sequence) +
                  ": not a torn tail; the next open refuses the store"});
  }
  return strict.ToString();
}

}  // namespace parley::log
