// A file system that can lose power: it remembers, for every file written
// through it, how much was synced, and which directory entries (new files,
// renames) no directory fsync has made durable yet. cut() makes every later
// write, sync, create, rename and delete fail, as a machine that lost power
// would; restore_power() then does to the files on disk what the power cut
// would have done to them — undoes the unsynced directory changes (a new
// file disappears; a rename is undone, the old target coming back), all
// of them or all but the oldest few (a file system commits them in order,
// fsync or not), and drops every unsynced byte, or keeps a random prefix
// of those bytes (a torn write) — so the next open sees what a rebooted
// machine would.
//
// Reads are passed through untouched. Files deleted before the cut stay
// deleted (an unsynced delete is not undone).
//
// It also injects I/O faults (faults(), tests/crashtest/io_fault.h): ENOSPC
// or EIO on appends, syncs, reads or file creation, at a chosen call or at
// random, while the power is on. A failed call changes nothing on disk.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <rocksdb/file_system.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tests/crashtest/io_fault.h"

namespace parley::crashtest {

class PowerCutFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit PowerCutFileSystem(std::shared_ptr<rocksdb::FileSystem> base =
                                  rocksdb::FileSystem::Default())
      : FileSystemWrapper(std::move(base)) {}
  const char* Name() const override { return "PowerCutFileSystem"; }

  // From now on every write fails with an I/O error.
  void cut() { down_ = true; }
  // Cuts the power right after the `appends`-th next append to a file
  // succeeds, so the cut lands between a write and its sync.
  void cut_after_appends(std::int64_t appends) { appends_to_cut_ = appends; }
  // Cuts the power right after an append to a WAL file (NNNNNN.log) while
  // an older WAL of its directory, written through this file system, still
  // exists — and, if `older_unsynced`, still holds unsynced bytes: the
  // moment a cut can keep records of a newer WAL and lose the older WAL's
  // tail before them.
  void cut_when_newer_wal_written(bool older_unsynced) {
    newer_wal_cut_ = older_unsynced ? NewerWalCut::kOlderUnsynced
                                    : NewerWalCut::kOlderExists;
  }
  bool down() const { return down_; }
  // How often a WAL file's writeback was started without a sync
  // (RangeSync: sync_file_range), which makes nothing durable.
  std::uint64_t wal_range_syncs() const { return wal_range_syncs_; }

  // The I/O faults this file system injects; none until one is armed.
  FaultSwitch& faults() { return faults_; }

  struct Losses {
    std::uint64_t files_removed = 0;  // unsynced new entries dropped
    std::uint64_t renames_undone = 0;
    std::uint64_t files_cut = 0;   // files that lost unsynced bytes
    std::uint64_t files_torn = 0;  // of those, kept a torn prefix
    std::uint64_t bytes_dropped = 0;
  };
  // Applies the cut to the files on disk; call once nothing has the files
  // open any more (the store is closed). `random` chooses what survives:
  // in half the cuts no unsynced directory change, in the others the
  // oldest 0..all of them; and for each file with unsynced bytes, none of
  // them or a torn prefix.
  Losses restore_power(std::mt19937_64& random);

  // How many of the `size` bytes of the file `name` a cut keeps: from
  // `synced` (every unsynced byte lost) to `size` (none lost); anything
  // else is clamped to that range.
  using KeptBytes = std::function<std::uint64_t(
      const std::string& name, std::uint64_t synced, std::uint64_t size)>;
  // How many of the `count` changes to `directory` (new files, renames)
  // that no fsync of it made durable survive a cut: the oldest ones. More
  // than `count` keeps them all.
  using KeptChanges = std::function<std::size_t(const std::string& directory,
                                                std::size_t count)>;
  // Applies the cut with the outcome a test chooses.
  Losses restore_power(const KeptBytes& kept_bytes,
                       const KeptChanges& kept_changes);

  // --- rocksdb::FileSystem -------------------------------------------------
  rocksdb::IOStatus NewWritableFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* file,
      rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus ReopenWritableFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* file,
      rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus ReuseWritableFile(
      const std::string& name, const std::string& old_name,
      const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* file,
      rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus NewSequentialFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSSequentialFile>* file,
      rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus NewRandomAccessFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomAccessFile>* file,
      rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus NewRandomRWFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSRandomRWFile>* file,
      rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus NewDirectory(const std::string& name,
                                 const rocksdb::IOOptions& options,
                                 std::unique_ptr<rocksdb::FSDirectory>* result,
                                 rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus RenameFile(const std::string& source,
                               const std::string& target,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus LinkFile(const std::string& source,
                             const std::string& target,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus DeleteFile(const std::string& name,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus CreateDir(const std::string& name,
                              const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus CreateDirIfMissing(const std::string& name,
                                       const rocksdb::IOOptions& options,
                                       rocksdb::IODebugContext* debug) override;
  rocksdb::IOStatus Truncate(const std::string& name, size_t size,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* debug) override;

  // Called by the files and directories this file system hands out.
  rocksdb::IOStatus appended(const std::string& name, std::uint64_t bytes);
  // The bytes written through this file system to `name` so far.
  std::uint64_t written(const std::string& name);
  // A sync of `name` that began once `up_to` bytes were written succeeded.
  rocksdb::IOStatus synced(const std::string& name, std::uint64_t up_to);
  rocksdb::IOStatus truncated(const std::string& name, std::uint64_t size);
  rocksdb::IOStatus directory_synced(const std::string& directory);
  void range_synced(const std::string& name);

 private:
  struct FileState {
    std::uint64_t size = 0;    // bytes written through this file system
    std::uint64_t synced = 0;  // of those, made durable by a sync
  };
  // A directory entry no fsync of its directory has made durable yet.
  struct Entry {
    std::string name;
    std::optional<std::string> renamed_from;  // a rename, else a new file
    // A rename's target as it was before, if it existed.
    std::optional<std::string> previous_target;
  };

  enum class NewerWalCut { kNone, kOlderExists, kOlderUnsynced };

  static rocksdb::IOStatus power_is_off();
  // Whether an append to `name` now triggers cut_when_newer_wal_written().
  // Caller holds mutex_.
  bool newer_wal_cut_due(const std::string& name) const;
  // Registers `name` as empty and unsynced, and as a new directory entry
  // unless it `existed`. Caller holds mutex_.
  void created(const std::string& name, bool existed);

  FaultSwitch faults_;
  std::atomic<bool> down_ = false;
  std::atomic<std::int64_t> appends_to_cut_ = 0;  // 0: no cut planned
  std::atomic<NewerWalCut> newer_wal_cut_ = NewerWalCut::kNone;
  std::atomic<std::uint64_t> wal_range_syncs_ = 0;
  std::mutex mutex_;
  std::map<std::string, FileState> files_;             // guarded by mutex_
  std::map<std::string, std::vector<Entry>> entries_;  // by directory; mutex_
};

}  // namespace parley::crashtest
