// Internal to the PostgreSQL backend: the LogStore over a writer
// connection and a pool of reading ones. Its members live in one file per
// job: postgres_appends.cc (appends and the write of each group, which
// log/group_commit.h leads; close) and
// postgres_reads.cc (reads, scans, the indexes, following a writer).
// Opening is in postgres_open.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "log/group_commit.h"
#include "log/mutex.h"
#include "log/postgres_connection.h"
#include "log/postgres_lease.h"
#include "log/postgres_log_store.h"
#include "log/postgres_pool.h"
#include "log/thread_annotations.h"

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
  CommitStatsSnapshot commit_stats() const override {
    return group_commit_.commit_stats();
  }
  Result<std::uint64_t> last_channel_sequence(
      std::string_view channel) const override;
  std::uint64_t wait_for_append(
      std::uint64_t after, std::chrono::milliseconds timeout) const override;
  Result<void> close() override;

 private:
  // Appends are refused before they are sequenced: on a read-only store
  // or a malformed batch.
  Result<void> admit(std::span<AppendEntry> batch) const;
  // The group commit's write: write_group(). A lost connection pauses the
  // store until resume() reconnects (kUnavailable); any other failure is
  // fatal to it.
  GroupCommit::WriteResult write(
      const std::vector<GroupCommit::Member>& members);
  // resume()'s reopen: a new writer connection holding the writer's lock,
  // under this store's epoch, and the last durable log sequence. Tried at
  // most once per kReconnectEvery; kUnavailable until it succeeds, kFailed
  // once another writer took the store over. Called with the group
  // commit's mutex held, by the thread that calls resume().
  Result<std::uint64_t> reconnect_writer();
  // Writes `members` as one transaction on writer_ (one pipeline: BEGIN,
  // the epoch check, one INSERT per table, COMMIT). Called by the leader
  // only.
  Result<void> write_group(const std::vector<GroupCommit::Member>& members);

  Result<std::uint64_t> durable_last_channel_sequence(
      std::string_view channel) const;
  Result<std::optional<std::uint64_t>> durable_find_key(
      std::string_view key) const;
  // Read-only stores: moves last_sequence_ to the newest committed record.
  // Takes catch_up_mutex_, which lets one catch-up run at a time.
  void catch_up() const EXCLUDES(catch_up_mutex_);
  Result<void> check_open() const;
  // The lease keeper's word that this writer lost the store: fails it.
  void lose_writer(Error why);

  static constexpr std::chrono::seconds kReconnectEvery{1};

  const std::string conninfo_;
  const std::string where_;
  const bool read_only_;
  const std::uint64_t epoch_;
  const Durability durability_;
  // reconnect_writer()'s; its callers hold the group commit's mutex.
  Connection::Clock::time_point next_reconnect_{};
  // Requested when this writer lost the store: every wait on the server
  // stops (postgres_connection.h), so no thread stays blocked on a server
  // that stopped answering. Before pool_, which takes its token.
  std::stop_source gave_up_;
  mutable ConnectionPool pool_;
  // Used by the active leader only (and close(), once no leader is).
  std::optional<Connection> writer_;

  // Sequencing and the group commit, whose callbacks use the members
  // above (lookups with its mutex held, write() by the group's leader).
  GroupCommit group_commit_;
  // Serializes close()'s shutdown of writer_.
  Mutex close_mutex_;
  mutable Mutex catch_up_mutex_;
  const std::function<void(const Error&)> on_writer_lost_;
  // A writer's; stopped by close(). Last: its thread calls lose_writer().
  std::unique_ptr<LeaseKeeper> keeper_;
};

// The newest record's log sequence (0 for an empty log); its stamp must
// agree with its key.
Result<std::uint64_t> find_last_sequence(const Connection& connection);
// Makes a writer connection ready for group commits: the session's
// durability, pipeline mode, non-blocking (its waits heed its give-up
// token).
Result<void> start_writing(Connection& writer, Durability durability,
                           const std::string& where);

// Clamps a sequence bound to what a bigint holds.
inline std::uint64_t int8_bound(std::uint64_t value) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();
  return value > kMax ? kMax : value;
}

}  // namespace parley::log::postgres_backend
