// The group commit both persistent backends share (RocksDB, PostgreSQL):
// batches are sequenced under one mutex into the open group; one thread
// leads each group, the first that needs it written (an append() waiting
// for its batch, a flush()) once no other leader is active. The leader
// seals the group, stamps its records' checksums (outside the mutex the
// appenders need: hashing a record takes longer than numbering it), has
// the backend write it as one unit, hands the lead to
// the next group's claimant, tells every deferred member and wakes the
// waiters with one futex call. What "one unit" is (a WriteBatch with one
// sync, a transaction) is the backend's.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "log/commit_stats.h"
#include "log/log_store.h"
#include "log/mutex.h"
#include "log/sequencer.h"
#include "log/thread_annotations.h"
#include "log/wake_flag.h"

namespace parley::log {

class GroupCommit {
 public:
  // One batch of a group: the appender's entries (alive until the group is
  // done, and changed by no one but the leader, which stamps each record's
  // checksum field), each with the position it was given.
  struct Member {
    std::span<AppendEntry> batch;
    LogStore::DurableCallback on_durable;  // append_deferred() only
  };

  // A group the backend failed to write.
  struct WriteFailure {
    Error told;      // what each member of the group is told
    Error refusal;   // what every later append is refused with
    bool resumable;  // the refusal lifts at resume(); else until reopened
  };
  using WriteResult = std::expected<void, WriteFailure>;
  // Writes a sealed group (never empty) as one unit: all of it or, on a
  // failure, nothing the store will ever read back, except after a
  // resumable failure whose outcome is unknown (a database connection lost
  // with COMMIT in flight), when resume()'s reopen reads what is durable.
  // Called by one leader at a time, without the mutex, once every record's
  // checksum is stamped.
  using WriteGroup = std::function<WriteResult(const std::vector<Member>&)>;
  // Reopens the backend after a resumable failure: the last durable log
  // sequence, or why not. A transient error (is_transient) keeps appends
  // refused until a later resume(); any other fails the store with it.
  using Reopen = std::function<Result<std::uint64_t>()>;

  // `lookups` are called by the sequencer with the mutex held.
  GroupCommit(std::uint64_t last_sequence, Sequencer::Lookups lookups,
              WriteGroup write);
  // Closes first (close()).
  ~GroupCommit() { (void)close(); }
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // LogStore::append and append_deferred for a batch the backend has
  // checked (Sequencer::check_entries and its own conditions).
  Result<std::vector<Position>> append(
      std::span<AppendEntry> batch,
      const LogStore::SequencedCallback& on_sequenced) EXCLUDES(mutex_);
  Result<void> append_deferred(std::span<AppendEntry> batch,
                               LogStore::DurableCallback on_durable)
      EXCLUDES(mutex_);
  // LogStore::flush.
  Result<void> flush() EXCLUDES(mutex_);
  // LogStore::resume: after a resumable failure, fails what is still
  // sequenced behind the lost group, waits for the active leader, then
  // calls `reopen` (with the mutex held, so nothing is sequenced meanwhile)
  // and numbers the next append after the sequence it returns. A backend
  // that reports no failure as resumable may pass none.
  Result<void> resume(const Reopen& reopen) EXCLUDES(mutex_);
  // Fails the store from outside a write (a PostgreSQL writer that lost its
  // lease): appends are refused with `why` until reopened. The first
  // failure stays.
  void fail(Error why) EXCLUDES(mutex_);
  // Refuses appends from now on, writes the open group, and returns once
  // no leader touches this object any more. Whether the store ended
  // healthy: never failed, and no resumable failure pending. Idempotent.
  bool close() EXCLUDES(mutex_);

  bool closed() const { return closed_; }
  // Highest durable log sequence; of a read-only store, the newest record
  // caught up to.
  std::uint64_t last_sequence() const { return last_sequence_; }
  // A read-only store saw records up to `last` written by another process.
  // Called by one thread at a time.
  void caught_up(std::uint64_t last) const;
  // LogStore::wait_for_append. A read-only store passes `catch_up`, which
  // looks for other processes' appends (calling caught_up()); it is polled,
  // since nothing signals them.
  std::uint64_t wait_for_append(std::uint64_t after,
                                std::chrono::milliseconds timeout,
                                const std::function<void()>& catch_up) const
      EXCLUDES(mutex_);
  CommitStatsSnapshot commit_stats() const { return commit_stats_.snapshot(); }

 private:
  // The batches sequenced, in order, while the group before was written.
  // Shared by the leader and every waiter.
  struct Group {
    std::vector<Member> members;  // guarded by mutex_ until sealed
    bool has_leader = false;      // guarded by mutex_
    // Set (guarded by mutex_) when a group before this one failed
    // resumably: the leader fails this group with it instead of writing.
    std::optional<Error> doomed;
    WakeFlag leader_turn;  // the group before is done: its leader leads this
    WakeFlag done;         // written or failed: `outcome` is set
    Result<void> outcome;
  };
  using GroupPtr = std::shared_ptr<Group>;

  // Sequences `batch` into the open group, which takes `on_durable` (left
  // as it is when no group is returned: an empty batch or a refusal).
  Result<GroupPtr> sequence(std::span<AppendEntry> batch,
                            LogStore::DurableCallback&& on_durable)
      EXCLUDES(mutex_);
  // Returns once `group` is done, leading it if nobody else will.
  Result<void> finish(const GroupPtr& group) EXCLUDES(mutex_);
  Result<void> lead(const GroupPtr& group) EXCLUDES(mutex_);
  // Applies a failed write of the group being written.
  void failed(const WriteFailure& failure) REQUIRES(mutex_);

  const WriteGroup write_;
  // Guards what is marked so below, and the Group fields marked "guarded by
  // mutex_". Held while sequencing, never during a write.
  mutable Mutex mutex_;
  mutable std::condition_variable appended_;  // on mutex_
  // The group new batches join, until its leader seals (resets) it.
  GroupPtr open_group_ GUARDED_BY(mutex_);
  // Sealed, being written by the active leader.
  GroupPtr writing_group_ GUARDED_BY(mutex_);
  bool leader_active_ GUARDED_BY(mutex_) = false;
  // Leaders between sealing their group and their last touch of this
  // object; close(), and so destruction, waits for none.
  int finishing_ GUARDED_BY(mutex_) = 0;
  // Written with mutex_ held, also read without it.
  std::atomic<bool> closed_ = false;
  // Fatal: refused until reopened.
  std::optional<Error> failed_ GUARDED_BY(mutex_);
  // Refused until resume().
  std::optional<Error> paused_ GUARDED_BY(mutex_);
  Sequencer sequencer_ GUARDED_BY(mutex_);
  const Sequencer::Lookups lookups_;
  // Raised by the leaders, and by caught_up() on a read-only store.
  mutable std::atomic<std::uint64_t> last_sequence_;
  CommitStats commit_stats_;  // recorded by the leader of each group
};

}  // namespace parley::log
