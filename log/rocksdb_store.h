// Internal to the RocksDB backend: the LogStore over an open Database.
// Its members live in one file per job: rocksdb_appends.cc (appends and
// the write of each group, which log/group_commit.h leads; resuming after
// a full disk; close) and
// rocksdb_reads.cc (reads, scans, the indexes, following a primary).
// Opening is in rocksdb_open.cc and rocksdb_read_only.cc.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "log/group_commit.h"
#include "log/mutex.h"
#include "log/rocksdb_database.h"
#include "log/rocksdb_log_store.h"
#include "log/shared_mutex.h"
#include "log/thread_annotations.h"

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
  Result<void> append_deferred(std::span<AppendEntry> batch,
                               DurableCallback on_durable) override;
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
  std::uint64_t last_sequence() const override {
    return group_commit_.last_sequence();
  }
  std::uint64_t cache_bytes() const override;
  CommitStatsSnapshot commit_stats() const override {
    return group_commit_.commit_stats();
  }
  Result<std::uint64_t> last_channel_sequence(
      std::string_view channel) const override;
  std::uint64_t wait_for_append(
      std::uint64_t after, std::chrono::milliseconds timeout) const override;
  Result<void> close() override;

 private:
  // Appends are refused before they are sequenced: on a read-only store,
  // a malformed batch, or too little free space.
  Result<void> admit(std::span<AppendEntry> batch);
  // The group commit's write: `members` as one WriteBatch with one sync.
  GroupCommit::WriteResult write(
      const std::vector<GroupCommit::Member>& members)
      EXCLUDES(database_mutex_);
  rocksdb::Status write_group(const std::vector<GroupCommit::Member>& members)
      REQUIRES_SHARED(database_mutex_);
  // resume()'s reopening of the database once there is room again: the
  // last durable log sequence (GroupCommit::Reopen).
  Result<std::uint64_t> reopen_after_no_space() EXCLUDES(database_mutex_);
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
  // and moves the last sequence to the newest record. A catch-up that finds
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

  // Locks are taken in the order group_commit_'s mutex, database_mutex_,
  // catch_up_mutex_.
  //
  // database_ is replaced by resume() (with group_commit_'s mutex held, so
  // no append is sequenced meanwhile) and closed by close(), which hold
  // database_mutex_ exclusively; readers, the sequencer's lookups and the
  // group leader's write hold it shared.
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
  // The last free-space sample and when it was taken
  // (CLOCK_MONOTONIC_COARSE, ns).
  std::atomic<std::uint64_t> free_bytes_ = 0;
  std::atomic<std::int64_t> free_checked_at_ = 0;

  // Sequencing and the group commit; last, since its callbacks (lookups
  // with its mutex held, write() by the group's leader) use the members
  // above.
  GroupCommit group_commit_;
};

}  // namespace parley::log::rocksdb_backend
