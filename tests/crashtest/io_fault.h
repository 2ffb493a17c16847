// An I/O fault a PowerCutFileSystem (tests/crashtest/power_cut_fs.h)
// injects: ENOSPC or EIO on one class of operations, at the N-th matching
// call after it is armed or at random, once or for every matching call
// until it is disarmed. FaultSwitch decides, call by call, whether a call
// fails.
#pragma once

#include <rocksdb/io_status.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace parley::crashtest {

struct IoFault {
  enum class Kind {
    kNoSpace,  // ENOSPC: RocksDB sees IOStatus::NoSpace
    kIoError,  // EIO: RocksDB sees IOStatus::IOError
  };
  // The operations a fault applies to, as a mask.
  enum Op : unsigned {
    kAppend = 1,  // a writable file's Append and Truncate
    kSync = 2,    // a writable file's Sync, Fsync and RangeSync
    kRead = 4,    // opening a file to read; sequential and random reads
    kCreate = 8,  // NewWritableFile, ReopenWritableFile, RenameFile,
                  // LinkFile and a directory's Fsync
  };
  Kind kind = Kind::kIoError;
  unsigned ops = kAppend;
  // The `nth` matching call after arming fails (1: the next one). 0: each
  // matching call fails with `probability` instead, drawn from `seed`.
  std::int64_t nth = 1;
  double probability = 0;
  std::uint64_t seed = 0;
  // Once it fired, every later matching call fails too (a disk that stays
  // full or broken) until disarmed; otherwise only that one call fails.
  bool sticky = true;
  // Only calls on files for which this is true match; empty: every file.
  std::function<bool(const std::string& name)> files;
};

// "ENOSPC" or "EIO"; "append", "sync", "read", "create" or a '|' list.
std::string_view to_string(IoFault::Kind kind);
std::string ops_name(unsigned ops);

// Thread safety: every member may be called from any thread.
class FaultSwitch {
 public:
  // Replaces the armed fault, if any; counting starts again.
  void arm(IoFault fault);
  // The fault clears: no call fails from now on.
  void disarm();
  bool armed() const { return armed_; }

  // OK, or the error the call `op` (one IoFault::Op) on `name`, described
  // as `what` ("sync of"), fails with: "injected EIO (Input/output error)
  // on sync of DIR/000012.log".
  rocksdb::IOStatus check(IoFault::Op op, const std::string& name,
                          std::string_view what);

  // Matching calls since the fault was armed.
  std::int64_t calls() const;
  // Calls failed since construction.
  std::uint64_t injected() const { return injected_; }
  // The first injected failure's message, if any.
  std::optional<std::string> first() const;

 private:
  std::atomic<bool> armed_ = false;
  std::atomic<std::uint64_t> injected_ = 0;
  mutable std::mutex mutex_;
  IoFault fault_;                     // guarded by mutex_
  std::int64_t calls_ = 0;            // matching calls since arm(); mutex_
  bool fired_ = false;                // guarded by mutex_
  std::mt19937_64 random_;            // guarded by mutex_
  std::optional<std::string> first_;  // guarded by mutex_
};

}  // namespace parley::crashtest
