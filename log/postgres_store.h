// Internal to the PostgreSQL backend: the LogStore over a writer
// connection and a pool of reading ones. Its members live in one file per
// job: postgres_appends.cc (sequencing, the group commit, close) and
// postgres_reads.cc (reads, scans, the indexes, following a writer).
// Opening is in postgres_open.cc.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "log/mutex.h"
#include "log/postgres_connection.h"
#include "log/postgres_lease.h"
#include "log/postgres_log_store.h"
#include "log/postgres_pool.h"
#include "log/sequencer.h"
#include "log/thread_annotations.h"
#include "log/wake_flag.h"

namespace parley::log::postgres_backend {

class PostgresLogStore final : public LogStore {
 public:
  // `writer` is the connection holding the writer's advisory lock, in
  // pipeline mode, and `epoch` the writer epoch it took, whose lease the
  // store keeps renewing (options.lease_timeout, options.on_writer_lost);
  // none for a `read_only` store, whose appends fail with kReadOnly and
  // whose wait_for_append() polls for other writers' commits. `where`
  // names the store in messages (no password).
  PostgresLogStore(std::string conninfo, std::string where,
                   std::optional<Connection> writer, bool read_only,
                   std::uint64_t last_sequence, std::uint64_t epoch,
                   const PostgresOptions& options = {});
  ~PostgresLogStore() override { (void)close(); }

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

  // A group commit: the batches sequenced, in order, while the group
  // before it was being written, written as one transaction by one leader
  // (the first thread that needs it written once no other leader is
  // active). Shared by the leader and every waiter.
  struct Group {
    std::vector<Member> members;  // guarded by mutex_ until sealed
    bool has_leader = false;      // guarded by mutex_
    WakeFlag leader_turn;  // the group before is done: its leader leads this
    WakeFlag done;         // written or failed: `outcome` is set
    Result<void> outcome;
  };
  using GroupPtr = std::shared_ptr<Group>;

  // Checks and sequences `batch` into the open group (see the RocksDB
  // backend, whose group commit this one follows).
  Result<std::pair<std::vector<Position>, GroupPtr>> sequence(
      std::span<AppendEntry> batch, DurableCallback&& on_durable)
      EXCLUDES(mutex_);
  // Returns once `group` is done, leading it if nobody else will. Takes
  // mutex_.
  Result<void> finish(const GroupPtr& group) EXCLUDES(mutex_);
  Result<void> lead(const GroupPtr& group) EXCLUDES(mutex_);
  // Writes `members` as one transaction on writer_ (one pipeline: BEGIN,
  // the epoch check, one INSERT per table, COMMIT). Called by the leader
  // only.
  Result<void> write_group(const std::vector<Member>& members);

  Result<std::uint64_t> durable_last_channel_sequence(
      std::string_view channel) const;
  Result<std::optional<std::uint64_t>> durable_find_key(
      std::string_view key) const;
  // Read-only stores: moves last_sequence_ to the newest committed record.
  // Takes catch_up_mutex_, which lets one catch-up run at a time.
  void catch_up() const EXCLUDES(catch_up_mutex_);
  Result<void> check_open() const;
  // The lease keeper's word that this writer lost the store: fails it.
  void lose_writer(Error why) EXCLUDES(mutex_);

  const std::string where_;
  const bool read_only_;
  const std::uint64_t epoch_;
  mutable ConnectionPool pool_;
  // Used by the active leader only (and close(), once no leader is).
  std::optional<Connection> writer_;

  // Guards what is marked so below, and the Group fields marked "guarded by
  // mutex_". Held while sequencing, never during a write.
  mutable Mutex mutex_;
  mutable std::condition_variable appended_;  // on mutex_
  // The group new batches join, until sealed.
  GroupPtr open_group_ GUARDED_BY(mutex_);
  // Sealed, being written by the active leader.
  GroupPtr writing_group_ GUARDED_BY(mutex_);
  bool leader_active_ GUARDED_BY(mutex_) = false;
  // Leaders between sealing their group and their last touch of the
  // store; close() waits for none.
  int finishing_ GUARDED_BY(mutex_) = 0;
  // Written with mutex_ held, also read without it.
  std::atomic<bool> closed_ = false;
  // Fatal: refused until reopened.
  std::optional<Error> failed_ GUARDED_BY(mutex_);
  Sequencer sequencer_ GUARDED_BY(mutex_);
  const Sequencer::Lookups lookups_{
      .last_channel_sequence =
          [this](std::string_view channel) {
            return durable_last_channel_sequence(channel);
          },
      .key_exists = [this](std::string_view key) -> Result<bool> {
        auto sequence = durable_find_key(key);
        if (!sequence) return std::unexpected(sequence.error());
        return sequence->has_value();
      }};
  // Highest acked; of a read-only store, the newest record caught up to.
  CommitStats commit_stats_;  // recorded by the leader of each group
  mutable std::atomic<std::uint64_t> last_sequence_;
  mutable Mutex catch_up_mutex_;
  const std::function<void(const Error&)> on_writer_lost_;
  // A writer's; stopped by close(). Last: its thread calls lose_writer().
  std::unique_ptr<LeaseKeeper> keeper_;
};

// Clamps a sequence bound to what a bigint holds.
inline std::uint64_t int8_bound(std::uint64_t value) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();
  return value > kMax ? kMax : value;
}

}  // namespace parley::log::postgres_backend
