// The RocksDB LogStore's write side: the checks before an append is
// sequenced (the free-space guard among them), the write of each group
// (one WriteBatch, one sync, a channel-index run per channel), resuming after
// the disk filled up, and close.
#include <rocksdb/write_batch.h>
#include <sys/statvfs.h>
#include <time.h>

#include <unordered_map>

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
      group_commit_(
          last_sequence,
          {.last_channel_sequence =
               [this](std::string_view channel) {
                 ReaderLock reading(database_mutex_);
                 return durable_last_channel_sequence(channel);
               },
           .key_exists = [this](std::string_view key) -> Result<bool> {
             ReaderLock reading(database_mutex_);
             auto sequence = durable_find_key(key);
             if (!sequence) return std::unexpected(sequence.error());
             return sequence->has_value();
           }},
          [this](const std::vector<GroupCommit::Member>& members) {
            return write(members);
          }) {
  write_options_.sync = options.durability == Durability::kSync;
}

Result<std::vector<Position>> RocksDbLogStore::append(
    std::span<AppendEntry> batch, const SequencedCallback& on_sequenced) {
  if (auto admitted = admit(batch); !admitted) {
    return std::unexpected(admitted.error());
  }
  return group_commit_.append(batch, on_sequenced);
}

Result<void> RocksDbLogStore::append_deferred(std::span<AppendEntry> batch,
                                              DurableCallback on_durable) {
  if (auto admitted = admit(batch); !admitted) return admitted;
  return group_commit_.append_deferred(batch, std::move(on_durable));
}

Result<void> RocksDbLogStore::admit(std::span<AppendEntry> batch) {
  if (read_only_) {
    if (group_commit_.closed()) return closed_error();
    return std::unexpected(
        Error{ErrorCode::kReadOnly, "the store at " + directory_.string() +
                                        " is open read-only; nothing was "
                                        "written"});
  }
  if (auto checked = Sequencer::check_entries(batch); !checked) {
    return std::unexpected(checked.error());
  }
  return check_free_space();
}

Result<void> RocksDbLogStore::flush() { return group_commit_.flush(); }

Result<void> RocksDbLogStore::check_free_space(bool fresh) {
  if (min_free_bytes_ == 0) return {};
  // The coarse clock (the last tick's time, a few ms old at most) is
  // precise enough for a 10 ms sample interval and costs a fraction of the
  // full one, which every append would otherwise read.
  timespec ticked{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ticked);
  const std::int64_t now =
      std::int64_t{ticked.tv_sec} * 1'000'000'000 + ticked.tv_nsec;
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

GroupCommit::WriteResult RocksDbLogStore::write(
    const std::vector<GroupCommit::Member>& members) {
  rocksdb::Status status;
  {
    ReaderLock reading(database_mutex_);
    status = write_group(members);
  }
  if (status.ok()) return {};
  if (status.IsNoSpace()) {
    // RocksDB wrote nothing of the batch and stopped writing; it can resume
    // once there is room again (resume()).
    return std::unexpected(GroupCommit::WriteFailure{
        .told = Error{ErrorCode::kNoSpace,
                      "log append failed, the disk is full (" +
                          status.ToString() + "); nothing of it was written"},
        .refusal = Error{ErrorCode::kNoSpace,
                         "the disk holding " + directory_.string() +
                             " filled up while the log was written (" +
                             status.ToString() +
                             "); appends are refused until space is freed "
                             "and the store resumes; nothing unwritten was "
                             "acked"},
        .resumable = true});
  }
  return std::unexpected(GroupCommit::WriteFailure{
      .told =
          Error{ErrorCode::kIoError, "log append failed: " + status.ToString()},
      .refusal = Error{ErrorCode::kFailed,
                       "log store failed: an earlier write or sync failed (" +
                           status.ToString() +
                           "); refusing appends until the store is "
                           "reopened"},
      .resumable = false});
}

rocksdb::Status RocksDbLogStore::write_group(
    const std::vector<GroupCommit::Member>& members) {
  // Sized once: each Put adds its key and value and at most 16 bytes of
  // tag, column family and lengths (a group is up to a few MiB, so growing
  // it by doubling would copy it again and fault in fresh pages).
  constexpr std::size_t kPutOverhead = 16;
  constexpr std::size_t kSequenceBytes = 8;
  std::size_t bytes = 12;  // WriteBatch's header: sequence and count
  for (const GroupCommit::Member& member : members) {
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
  // The group's channel-index runs (rocksdb_layout.h), one per channel: the
  // sequencer numbered a channel's entries of the group consecutively.
  struct Run {
    std::uint64_t first_channel_sequence = 0;
    std::uint64_t last_channel_sequence = 0;
    std::uint64_t last_log_sequence = 0;
    std::string log_sequences;
  };
  std::unordered_map<std::string_view, Run> runs;
  rocksdb::ColumnFamilyHandle* const channel_index = database_[kChannelIndex];
  auto put_run = [&](std::string_view channel, const Run& run) {
    return batch.Put(channel_index,
                     layout::channel_key(channel, run.first_channel_sequence),
                     run.log_sequences);
  };
  for (const GroupCommit::Member& member : members) {
    for (const AppendEntry& entry : member.batch) {
      const Position& position = entry.position;
      std::string sequence = layout::encode_be64(position.log_sequence);
      rocksdb::Status status =
          batch.Put(database_[kLog], sequence, entry.record);
      if (status.ok() && !entry.channel.empty()) {
        Run& run = runs[entry.channel];
        if (!run.log_sequences.empty() &&
            position.channel_sequence != run.last_channel_sequence + 1) {
          status = put_run(entry.channel, run);
          run = Run{};
        }
        if (run.log_sequences.empty()) {
          run.first_channel_sequence = position.channel_sequence;
        }
        layout::append_to_index_run(run.log_sequences, run.last_log_sequence,
                                    position.log_sequence);
        run.last_channel_sequence = position.channel_sequence;
        run.last_log_sequence = position.log_sequence;
      }
      if (status.ok() && !entry.idempotency_key.empty()) {
        status =
            batch.Put(database_[kIdempotency], entry.idempotency_key, sequence);
      }
      if (!status.ok()) return status;
    }
  }
  for (const auto& [channel, run] : runs) {
    if (rocksdb::Status status = put_run(channel, run); !status.ok()) {
      return status;
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
  return group_commit_.resume([this] { return reopen_after_no_space(); });
}

Result<std::uint64_t> RocksDbLogStore::reopen_after_no_space() {
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
    // Still no room for what reopening writes: a later resume() retries.
    if (reopened.error().code == ErrorCode::kNoSpace) {
      return std::unexpected(reopened.error());
    }
    return std::unexpected(
        Error{ErrorCode::kFailed,
              "log store failed: reopening the log after a full disk "
              "failed (" +
                  reopened.error().message +
                  "); refusing appends until the store is reopened"});
  }
  database_ = std::move(*reopened);
  unreadable_.reset();
  // A batch whose sync (not write) met the full disk may have reached the
  // WAL whole: it is in the log now, like a batch in flight at a crash.
  return find_last_sequence(database_);
}

Result<void> RocksDbLogStore::close() {
  {
    ReaderLock reading(database_mutex_);
    if (group_commit_.closed() && !database_.db) return {};
  }
  const bool healthy = group_commit_.close();
  // A clean close: every acked record is synced, so the mark may promise
  // them (rocksdb_clean_close.h).
  bool clean = !read_only_ && healthy;
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
    // Reads that began before the group commit closed end first.
    WriterLock database(database_mutex_);
    MutexLock catching_up(catch_up_mutex_);
    if (!database_.db) return {};  // another close() came first
    status = database_.close();
  }
  if (!status.ok()) return io_error("closing the log store", status);
  if (clean) {
    rocksdb::Env& env =
        options_.env != nullptr ? *options_.env : *rocksdb::Env::Default();
    return write_clean_close(env, directory_, group_commit_.last_sequence());
  }
  return {};
}

}  // namespace parley::log::rocksdb_backend
