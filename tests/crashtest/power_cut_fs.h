// A file system that can lose power: it remembers, for every file written
// through it, how much was synced, and which directory entries (new files,
// renames) no directory fsync has made durable yet. cut() makes every later
// write, sync, create, rename and delete fail, as a machine that lost power
// would; restore_power() then does to the files on disk what the power cut
// would have done to them — drops every unsynced directory entry (a new
// file disappears; a rename is undone, the old target coming back) and
// every unsynced byte, or keeps a random prefix of those bytes (a torn
// write) — so the next open sees what a rebooted machine would.
//
// Reads are passed through untouched. Files deleted before the cut stay
// deleted (an unsynced delete is not undone).
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <rocksdb/file_system.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

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
  bool down() const { return down_; }

  struct Losses {
    std::uint64_t files_removed = 0;  // unsynced new entries dropped
    std::uint64_t renames_undone = 0;
    std::uint64_t files_cut = 0;   // files that lost unsynced bytes
    std::uint64_t files_torn = 0;  // of those, kept a torn prefix
    std::uint64_t bytes_dropped = 0;
  };
  // Applies the cut to the files on disk; call once nothing has the files
  // open any more (the store is closed). `random` chooses torn lengths.
  Losses restore_power(std::mt19937_64& random);

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
  rocksdb::IOStatus synced(const std::string& name);
  rocksdb::IOStatus truncated(const std::string& name, std::uint64_t size);
  rocksdb::IOStatus directory_synced(const std::string& directory);

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

  static rocksdb::IOStatus power_is_off();
  // Registers `name` as empty and unsynced, and as a new directory entry
  // unless it `existed`. Caller holds mutex_.
  void created(const std::string& name, bool existed);

  std::atomic<bool> down_ = false;
  std::atomic<std::int64_t> appends_to_cut_ = 0;  // 0: no cut planned
  std::mutex mutex_;
  std::map<std::string, FileState> files_;             // guarded by mutex_
  std::map<std::string, std::vector<Entry>> entries_;  // by directory; mutex_
};

}  // namespace parley::crashtest
