// Internal to the RocksDB backend: the LogStore over an open Database.
// Its members live in one file per job: rocksdb_group_commit.cc (appends,
// the group commit, resuming after a full disk, close) and
// rocksdb_reads.cc (reads, scans, the indexes, following a primary).
// Opening is in rocksdb_open.cc and rocksdb_read_only.cc.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "log/mutex.h"
#include "log/rocksdb_database.h"
#include "log/rocksdb_log_store.h"
#include "log/sequencer.h"
#include "log/shared_mutex.h"
#include "log/thread_annotations.h"
#include "log/wake_flag.h"

namespace parley::log::rocksdb_backend {

// Opens the existing store in `directory` read-write, replaying its WAL:
// strictly first, then, if that finds damage, tolerating only a torn tail
// (reported in `report`) unless `clean_close` (the store's clean-close mark,
// rocksdb_clean_close.h) says it has none. `creating` also makes what is
// missing.
Result<Database> open_recovering(
    const std::filesystem::path& directory, const RocksDbOptions& options,
    bool creating, RecoveryReport& report,
    std::optional<std::uint64_t> clean_close = std::nullopt);

// Opens the store in `directory` read-only (RocksDB's OpenForReadOnly: no
// lock, nothing written), tolerating an incomplete WAL tail: a view for
// reads while the store cannot be reopened for writing.
Result<Database> open_read_view(const std::filesystem::path& directory,
                                const RocksDbOptions& options);

class RocksDbLogStore final : public LogStore {
 public:
  // A `read_only` store is a RocksDB secondary instance of a store another
  // process may be writing: appends fail with kReadOnly and
  // wait_for_append() catches up with the primary.
  RocksDbLogStore(Database database, const std::filesystem::path& directory,
                  const RocksDbOptions& options, std::uint64_t last_sequence,
                  bool read_only);
  ~RocksDbLogStore() override { (void)close(); }

  using LogStore::append;
  Result<std::vector<Position>> append(
      std::span<AppendEntry> batch,
      const SequencedCallback& on_sequenced) override;
  Result<std::vector<Position>> append_deferred(
      std::span<AppendEntry> batch, DurableCallback on_durable) override;
  Result<void> flush() override;
  Result<void> resume() override;
  Result<void> read(std::uint64_t from, std::uint64_t to,
                    const RecordVisitor& visit) const override;
  Result<void> read_channel(std::string_view channel, std::uint64_t from,
                            std::uint64_t to,
                            const ChannelVisitor& visit) const override;
  Result<void> scan_log(const RecordVisitor& visit) const override;
  Result<void> scan_channel_index(
      const ChannelIndexVisitor& visit) const override;
  Result<void> scan_idempotency_index(
      const IdempotencyIndexVisitor& visit) const override;
  Result<std::optional<std::uint64_t>> find_idempotency_key(
      std::string_view key) const override;
  std::uint64_t last_sequence() const override { return last_sequence_; }
  std::uint64_t cache_bytes() const override;
  CommitStatsSnapshot commit_stats() const override {
    return commit_stats_.snapshot();
  }
  Result<std::uint64_t> last_channel_sequence(
      std::string_view channel) const override;
  std::uint64_t wait_for_append(
      std::uint64_t after, std::chrono::milliseconds timeout) const override;
  Result<void> close() override;

 private:
  // One batch of a group: the appender's entries (alive and unchanged
  // until the group is done) and the positions they were given.
  struct Member {
    std::span<AppendEntry> batch;
    std::vector<Position> positions;
    DurableCallback on_durable;  // append_deferred() only
  };

  // A group commit: the batches sequenced, in order, while the group before
  // it was being written. One thread leads it: the first that needs it
  // written (an append() waiting for its batch, a flush()) once no other
  // leader is active. The leader seals it, writes it as one WriteBatch with
  // one sync, hands the lead on, tells every deferred member and wakes the
  // waiters with one futex call. Shared by the leader and every waiter.
  struct Group {
    std::vector<Member> members;  // guarded by mutex_ until sealed
    bool has_leader = false;      // guarded by mutex_
    // Set (guarded by mutex_) when a group before this one ran out of
    // space: the leader fails the group with it instead of writing.
    std::optional<Error> doomed;
    WakeFlag leader_turn;  // the group before is done: its leader leads this
    WakeFlag done;         // written or failed: `outcome` is set
    Result<void> outcome;
  };
  using GroupPtr = std::shared_ptr<Group>;

  // Checks and sequences `batch` into the open group, which takes
  // `on_durable` (left as it is when no group is returned: an empty batch
  // or a refusal). Takes mutex_.
  Result<std::pair<std::vector<Position>, GroupPtr>> sequence(
      std::span<AppendEntry> batch, DurableCallback&& on_durable)
      EXCLUDES(mutex_);
  // Returns once `group` is done, leading it if nobody else will. Takes
  // mutex_.
  Result<void> finish(const GroupPtr& group) EXCLUDES(mutex_);
  Result<void> lead(const GroupPtr& group) EXCLUDES(mutex_);
  rocksdb::Status write_group(const std::vector<Member>& members)
      REQUIRES_SHARED(database_mutex_);
  // After a group failed for want of space: refuses appends until
  // resume(), dooms the batches sequenced behind the group, and numbers the
  // next append right after the last durable one again.
  void stop_for_no_space(const rocksdb::Status& status) REQUIRES(mutex_);
  Result<std::uint64_t> durable_last_channel_sequence(
      std::string_view channel) const REQUIRES_SHARED(database_mutex_);
  Result<std::optional<std::uint64_t>> durable_find_key(
      std::string_view key) const REQUIRES_SHARED(database_mutex_);

  // kNoSpace when the file system holding the store is nearly full;
  // `fresh` samples the free space now instead of at most every 10 ms.
  Result<void> check_free_space(bool fresh = false);

  // Whether a read may go on: kClosed once closed, a read-only store's
  // catch-up error once one found the store damaged, or why the store has
  // no database open (unreadable_). Takes catch_up_mutex_.
  Result<void> check_readable() const REQUIRES_SHARED(database_mutex_);
  // Read-only stores: replays what the primary wrote since the last call
  // and moves last_sequence_ to the newest record. A catch-up that finds
  // the store damaged is kept in catch_up_error_, which reads then return.
  // Takes database_mutex_ shared, then catch_up_mutex_.
  void catch_up() const EXCLUDES(database_mutex_, catch_up_mutex_);
  // The same, for a caller already holding database_mutex_.
  void catch_up_held() const REQUIRES_SHARED(database_mutex_)
      EXCLUDES(catch_up_mutex_);
  // A read that found a gap: on a read-only store with `retries` left,
  // drops `it`, waits kFollowRetryPause, catches up and returns true (look
  // again with a new iterator); else false (the gap is real).
  bool caught_up_after_gap(std::unique_ptr<rocksdb::Iterator>& it,
                           int& retries) const REQUIRES_SHARED(database_mutex_)
      EXCLUDES(catch_up_mutex_);

  // Locks are taken in the order mutex_, database_mutex_, catch_up_mutex_.
  //
  // database_ is replaced by resume() and closed by close(), which hold
  // database_mutex_ exclusively (and mutex_, so no append is sequenced
  // meanwhile); readers, the sequencer's lookups and the group leader's
  // write hold it shared.
  mutable SharedMutex database_mutex_;
  Database database_ GUARDED_BY(database_mutex_);
  // Why database_ is not open (resume() could open neither the store nor
  // a read view of it).
  std::optional<Error> unreadable_ GUARDED_BY(database_mutex_);
  const RocksDbOptions options_;
  rocksdb::WriteOptions write_options_;
  const std::filesystem::path directory_;
  const bool read_only_;
  mutable Mutex catch_up_mutex_;
  mutable std::optional<Error> catch_up_error_ GUARDED_BY(catch_up_mutex_);
  const std::uint64_t min_free_bytes_;
  // The last free-space sample and when it was taken (steady clock, ns).
  std::atomic<std::uint64_t> free_bytes_ = 0;
  std::atomic<std::int64_t> free_checked_at_ = 0;

  // Guards what is marked so below, and the Group fields marked "guarded by
  // mutex_". Held while sequencing, never during a write.
  mutable Mutex mutex_;
  mutable std::condition_variable appended_;  // on mutex_
  // The group new batches join, until its leader seals (resets) it.
  GroupPtr open_group_ GUARDED_BY(mutex_);
  // Sealed, being written by the active leader.
  GroupPtr writing_group_ GUARDED_BY(mutex_);
  bool leader_active_ GUARDED_BY(mutex_) = false;
  // Written with mutex_ held, also read without it.
  std::atomic<bool> closed_ = false;
  // Fatal: refused until reopened.
  std::optional<Error> failed_ GUARDED_BY(mutex_);
  std::optional<Error> no_space_ GUARDED_BY(mutex_);  // refused until resume()
  Sequencer sequencer_ GUARDED_BY(mutex_);
  // Called by sequencer_, mutex_ held.
  const Sequencer::Lookups lookups_{
      .last_channel_sequence =
          [this](std::string_view channel) {
            ReaderLock reading(database_mutex_);
            return durable_last_channel_sequence(channel);
          },
      .key_exists = [this](std::string_view key) -> Result<bool> {
        ReaderLock reading(database_mutex_);
        auto sequence = durable_find_key(key);
        if (!sequence) return std::unexpected(sequence.error());
        return sequence->has_value();
      }};
  // Highest acked; of a read-only store, the newest record caught up to.
  mutable std::atomic<std::uint64_t> last_sequence_;
  CommitStats commit_stats_;  // recorded by the leader of each group
};

}  // namespace parley::log::rocksdb_backend
