// The RocksDB LogStore's write side: sequencing, the group commit, the
// free-space guard, resuming after the disk filled up, and close.
#include <rocksdb/write_batch.h>
#include <sys/statvfs.h>

#include <chrono>

#include "log/rocksdb_clean_close.h"
#include "log/rocksdb_layout.h"
#include "log/rocksdb_store.h"

namespace parley::log::rocksdb_backend {

namespace layout = rocksdb_layout;

RocksDbLogStore::RocksDbLogStore(Database database,
                                 const std::filesystem::path& directory,
                                 const RocksDbOptions& options,
                                 std::uint64_t last_sequence, bool read_only)
    : database_(std::move(database)),
      options_(options),
      directory_(directory),
      read_only_(read_only),
      min_free_bytes_(options.min_free_bytes),
      sequencer_(last_sequence),
      last_sequence_(last_sequence) {
  write_options_.sync = options.durability == Durability::kSync;
}

Result<std::vector<Position>> RocksDbLogStore::append(
    std::span<AppendEntry> batch, const SequencedCallback& on_sequenced) {
  auto sequenced = sequence(batch, {});
  if (!sequenced) return std::unexpected(sequenced.error());
  auto& [positions, group] = *sequenced;
  if (on_sequenced) on_sequenced(positions);
  if (!group) return std::move(positions);  // an empty batch
  if (auto written = finish(group); !written) {
    return std::unexpected(written.error());
  }
  return std::move(positions);
}

Result<std::vector<Position>> RocksDbLogStore::append_deferred(
    std::span<AppendEntry> batch, DurableCallback on_durable) {
  auto sequenced = sequence(batch, std::move(on_durable));
  if (!sequenced) return std::unexpected(sequenced.error());
  auto& [positions, group] = *sequenced;
  // An empty batch: no group, and sequence() left on_durable to us.
  if (!group) on_durable({});
  return std::move(positions);
}

Result<std::pair<std::vector<Position>, RocksDbLogStore::GroupPtr>>
RocksDbLogStore::sequence(std::span<AppendEntry> batch,
                          DurableCallback&& on_durable) {
  if (read_only_) {
    if (closed_) return closed_error();
    return std::unexpected(
        Error{ErrorCode::kReadOnly, "the store at " + directory_.string() +
                                        " is open read-only; nothing was "
                                        "written"});
  }
  if (auto checked = Sequencer::check_entries(batch); !checked) {
    return std::unexpected(checked.error());
  }
  if (auto room = check_free_space(); !room) {
    return std::unexpected(room.error());
  }
  MutexLock lock(mutex_);
  if (closed_) return closed_error();
  if (failed_) return std::unexpected(*failed_);
  if (no_space_) return std::unexpected(*no_space_);
  auto positions = sequencer_.assign(batch, lookups_);
  if (!positions) return std::unexpected(positions.error());
  if (batch.empty()) return std::pair{std::move(*positions), GroupPtr()};
  if (!open_group_) open_group_ = std::make_shared<Group>();
  open_group_->members.push_back({batch, *positions, std::move(on_durable)});
  return std::pair{std::move(*positions), open_group_};
}

Result<void> RocksDbLogStore::flush() {
  GroupPtr group;
  {
    MutexLock lock(mutex_);
    group = open_group_ ? open_group_ : writing_group_;
    if (!group) {
      if (failed_) return std::unexpected(*failed_);
      return {};
    }
  }
  return finish(group);
}

Result<void> RocksDbLogStore::finish(const GroupPtr& group) {
  MutexLock lock(mutex_);
  if (group == open_group_ && !group->has_leader) {
    group->has_leader = true;
    const bool leads_now = !leader_active_;
    leader_active_ = true;
    lock.unlock();
    if (!leads_now) group->leader_turn.wait();
    return lead(group);
  }
  lock.unlock();
  group->done.wait();
  return group->outcome;
}

Result<void> RocksDbLogStore::check_free_space(bool fresh) {
  if (min_free_bytes_ == 0) return {};
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count();
  auto sample = [&] {
    struct statvfs stats {};
    if (statvfs(directory_.c_str(), &stats) != 0) return false;
    free_bytes_ = static_cast<std::uint64_t>(stats.f_bavail) * stats.f_frsize;
    free_checked_at_ = now;
    return true;
  };
  constexpr std::int64_t kSampleEvery = 10'000'000;  // ns
  bool sampled = false;
  if (fresh || now - free_checked_at_.load() >= kSampleEvery) {
    sampled = sample();
  }
  // A refusal is never made on a stale sample: space may have been freed
  // since.
  if (free_bytes_.load() < min_free_bytes_ && !sampled) sample();
  const std::uint64_t free = free_bytes_.load();
  if (free >= min_free_bytes_) return {};
  return std::unexpected(
      Error{ErrorCode::kNoSpace,
            "no space: " + std::to_string(free) + " bytes free on " +
                directory_.string() + ", appends need " +
                std::to_string(min_free_bytes_) + "; nothing was written"});
}

// Seals `group` and writes it with one sync. Runs on the thread that
// claimed it once no other leader is active; hands the lead to the next
// group's claimant, if it has one, when done.
Result<void> RocksDbLogStore::lead(const GroupPtr& group) {
  MutexLock lock(mutex_);
  if (open_group_ == group) open_group_.reset();  // later batches: next group
  writing_group_ = group;
  const std::optional<Error> refused = failed_ ? failed_ : group->doomed;
  lock.unlock();
  const std::vector<Member>& members = group->members;
  rocksdb::Status status;
  if (!refused) {
    ReaderLock reading(database_mutex_);
    const auto started = std::chrono::steady_clock::now();
    status = write_group(members);
    if (status.ok()) {
      commit_stats_.record(members.back().positions.back().log_sequence -
                               members.front().positions.front().log_sequence +
                               1,
                           std::chrono::steady_clock::now() - started);
    }
  }
  lock.lock();
  if (refused) {
    group->outcome = std::unexpected(*refused);
  } else if (status.ok()) {
    for (const Member& member : members) {
      for (const AppendEntry& entry : member.batch) {
        if (!entry.idempotency_key.empty()) {
          sequencer_.key_committed(entry.idempotency_key);
        }
      }
    }
    last_sequence_ = members.back().positions.back().log_sequence;
  } else if (status.IsNoSpace()) {
    // RocksDB wrote nothing of the batch and stopped writing; it can resume
    // once there is room again (resume()).
    stop_for_no_space(status);
    group->outcome = std::unexpected(
        Error{ErrorCode::kNoSpace, "log append failed, the disk is full (" +
                                       status.ToString() +
                                       "); nothing of it was written"});
  } else {
    // The sequencer has numbered past this group: nothing may follow it.
    failed_ = Error{ErrorCode::kFailed,
                    "log store failed: an earlier write or sync failed (" +
                        status.ToString() +
                        "); refusing appends until the store is reopened"};
    group->outcome = std::unexpected(
        Error{ErrorCode::kIoError, "log append failed: " + status.ToString()});
  }
  writing_group_.reset();
  const GroupPtr next = open_group_;
  const bool hand_on = next && next->has_leader;
  leader_active_ = hand_on;
  lock.unlock();
  if (hand_on) next->leader_turn.set();
  // A told member may end its batch's storage: touch no batch after this.
  for (const Member& member : members) {
    if (member.on_durable) member.on_durable(group->outcome);
  }
  Result<void> outcome = group->outcome;
  appended_.notify_all();
  // Last: a member told here may close and destroy the store.
  group->done.set();
  return outcome;
}

void RocksDbLogStore::stop_for_no_space(const rocksdb::Status& status) {
  no_space_ =
      Error{ErrorCode::kNoSpace,
            "the disk holding " + directory_.string() +
                " filled up while the log was written (" + status.ToString() +
                "); appends are refused until space is freed and "
                "the store resumes; nothing unwritten was acked"};
  // Batches sequenced behind the failed group would leave a gap: they fail
  // too, and the next append takes the first sequence after the last
  // durable one.
  if (open_group_) open_group_->doomed = no_space_;
  sequencer_ = Sequencer(last_sequence_);
}

rocksdb::Status RocksDbLogStore::write_group(
    const std::vector<Member>& members) {
  // Sized once: each Put adds its key and value and at most 16 bytes of
  // tag, column family and lengths (a group is up to a few MiB, so growing
  // it by doubling would copy it again and fault in fresh pages).
  constexpr std::size_t kPutOverhead = 16;
  constexpr std::size_t kSequenceBytes = 8;
  std::size_t bytes = 12;  // WriteBatch's header: sequence and count
  for (const Member& member : members) {
    for (const AppendEntry& entry : member.batch) {
      bytes += kPutOverhead + kSequenceBytes + entry.record.size();
      if (!entry.channel.empty()) {
        bytes += kPutOverhead + entry.channel.size() + 1 + 2 * kSequenceBytes;
      }
      if (!entry.idempotency_key.empty()) {
        bytes += kPutOverhead + entry.idempotency_key.size() + kSequenceBytes;
      }
    }
  }
  rocksdb::WriteBatch batch(bytes);
  for (const Member& member : members) {
    for (std::size_t i = 0; i < member.batch.size(); ++i) {
      const AppendEntry& entry = member.batch[i];
      const Position& position = member.positions[i];
      std::string sequence = layout::encode_be64(position.log_sequence);
      rocksdb::Status status =
          batch.Put(database_[kLog], sequence, entry.record);
      if (status.ok() && !entry.channel.empty()) {
        status = batch.Put(
            database_[kChannelIndex],
            layout::channel_key(entry.channel, position.channel_sequence),
            sequence);
      }
      if (status.ok() && !entry.idempotency_key.empty()) {
        status =
            batch.Put(database_[kIdempotency], entry.idempotency_key, sequence);
      }
      if (!status.ok()) return status;
    }
  }
  rocksdb::Status status = database_.db->Write(write_options_, &batch);
  // A write made after a WAL file failed to sync may sit in a newer WAL
  // file behind records that never became durable (rocksdb_wal_order.h):
  // it fails as a failed sync does.
  if (status.ok() && database_.wal_seal_sync) {
    if (auto failure = database_.wal_seal_sync->failure()) return *failure;
  }
  return status;
}

Result<void> RocksDbLogStore::resume() {
  MutexLock lock(mutex_);
  if (closed_) return closed_error();
  if (failed_) return std::unexpected(*failed_);
  if (!no_space_) return {};
  // Fail what is still sequenced behind the lost group, and let the
  // leader writing it finish.
  while (open_group_ || leader_active_) {
    if (open_group_ && !open_group_->has_leader) {
      const GroupPtr group = open_group_;
      lock.unlock();
      (void)finish(group);
      lock.lock();
    } else {
      lock.wait(appended_);
    }
  }
  if (auto room = check_free_space(/*fresh=*/true); !room) {
    return std::unexpected(Error{
        ErrorCode::kNoSpace,
        room.error().message + " (the store resumes once space is freed)"});
  }
  // Reopen the database rather than DB::Resume(): after a failed WAL write
  // RocksDB 7 replaces its WAL writer only if a memtable had something to
  // flush, and a writer that saw an error refuses every later write.
  // Reopening replays the WAL as any open does (a torn tail, the failed
  // write's, is dropped).
  WriterLock database(database_mutex_);
  (void)database_.close();  // reports the error that stopped it
  RecoveryReport report;
  auto reopened =
      open_recovering(directory_, options_, /*creating=*/false, report);
  if (!reopened) {
    // Reads go on through a view that writes nothing: until a later
    // resume() reopens the log once there is room, or for good.
    auto view = open_read_view(directory_, options_);
    if (view) {
      database_ = std::move(*view);
      unreadable_.reset();
    } else {
      unreadable_ =
          Error{reopened.error().code,
                "the log is unreadable: reopening it after a full disk "
                "failed (" +
                    reopened.error().message +
                    "), and so did opening it to "
                    "read (" +
                    view.error().message + ")"};
    }
  }
  if (!reopened && reopened.error().code == ErrorCode::kNoSpace) {
    // Still no room for what reopening writes.
    return std::unexpected(reopened.error());
  }
  if (!reopened) {
    failed_ = Error{ErrorCode::kFailed,
                    "log store failed: reopening the log after a full disk "
                    "failed (" +
                        reopened.error().message +
                        "); refusing appends until the store is reopened"};
    return std::unexpected(*failed_);
  }
  database_ = std::move(*reopened);
  unreadable_.reset();
  // A batch whose sync (not write) met the full disk may have reached the
  // WAL whole: it is in the log now, like a batch in flight at a crash.
  auto last = find_last_sequence(database_);
  if (!last) {
    failed_ = last.error();
    return std::unexpected(*failed_);
  }
  last_sequence_ = *last;
  sequencer_ = Sequencer(*last);
  no_space_.reset();
  return {};
}

Result<void> RocksDbLogStore::close() {
  MutexLock lock(mutex_);
  {
    ReaderLock reading(database_mutex_);
    if (closed_ && !database_.db) return {};
  }
  closed_ = true;
  if (open_group_) {
    // Deferred batches nobody has written yet: write them now.
    const GroupPtr group = open_group_;
    lock.unlock();
    (void)finish(group);  // failures reach the members
    lock.lock();
  }
  appended_.notify_all();
  while (leader_active_) lock.wait(appended_);
  // A clean close: every acked record is synced, so the mark may promise
  // them (rocksdb_clean_close.h).
  bool clean = !read_only_ && !failed_ && !no_space_;
  {
    ReaderLock reading(database_mutex_);
    clean = clean && database_.db &&
            !(database_.wal_seal_sync && database_.wal_seal_sync->failure());
    if (clean && options_.durability == Durability::kAsync) {
      clean = database_.db->SyncWAL().ok();
    }
  }
  rocksdb::Status status;
  {
    // Reads that began before closed_ was set end first.
    WriterLock database(database_mutex_);
    MutexLock catching_up(catch_up_mutex_);
    status = database_.close();
  }
  if (!status.ok()) return io_error("closing the log store", status);
  if (clean) {
    rocksdb::Env& env =
        options_.env != nullptr ? *options_.env : *rocksdb::Env::Default();
    return write_clean_close(env, directory_, last_sequence_);
  }
  return {};
}

}  // namespace parley::log::rocksdb_backend
