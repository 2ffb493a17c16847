#include "log/rocksdb_log_store.h"

#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <stdlib.h>
#include <sys/statvfs.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "log/record_check.h"
#include "log/rocksdb_layout.h"
#include "log/sequencer.h"
#include "log/wake_flag.h"
#include "schemas/record.h"

namespace parley::log {
namespace {

namespace layout = rocksdb_layout;

std::unexpected<Error> error_of(ErrorCode code, const std::string& context,
                                const rocksdb::Status& status) {
  return std::unexpected(Error{code, context + ": " + status.ToString()});
}

std::unexpected<Error> io_error(const std::string& context,
                                const rocksdb::Status& status) {
  return error_of(
      status.IsCorruption() ? ErrorCode::kCorruption : ErrorCode::kIoError,
      context, status);
}

std::string_view view(const rocksdb::Slice& slice) {
  return {slice.data(), slice.size()};
}

rocksdb::Slice slice(std::string_view bytes) {
  return {bytes.data(), bytes.size()};
}

// Column family handles in the order of families().
enum Family { kDefault, kLog, kChannelIndex, kIdempotency, kMeta, kFamilies };

// A channel-index key's channel part (its length byte and id), so that
// each channel's keys, which ascend, are inserted at a remembered spot.
class ChannelPrefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "parley.ChannelPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return {key.data(), 1 + std::size_t{static_cast<std::uint8_t>(key[0])}};
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return !key.empty() &&
           key.size() >= 1 + std::size_t{static_cast<std::uint8_t>(key[0])};
  }
};

std::vector<rocksdb::ColumnFamilyDescriptor> families() {
  rocksdb::ColumnFamilyOptions plain;
  plain.level_compaction_dynamic_level_bytes = true;
  rocksdb::ColumnFamilyOptions point_lookups = plain;
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  point_lookups.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  // The log is read in long sequential scans (hydrate, replay): big blocks,
  // LZ4 (cheap to decode) rather than Snappy on 4 KiB blocks.
  rocksdb::ColumnFamilyOptions sequential = plain;
  rocksdb::BlockBasedTableOptions scans;
  scans.block_size = 64 << 10;
  sequential.table_factory.reset(rocksdb::NewBlockBasedTableFactory(scans));
  sequential.compression = rocksdb::kLZ4Compression;
  // Appends are single-threaded (one group leader at a time), so memtable
  // inserts can use hints (DBOptions::allow_concurrent_memtable_write is
  // off): the log's keys always go at the end, each channel's after its
  // last, and an insert skips the skiplist search.
  sequential.memtable_insert_with_hint_prefix_extractor.reset(
      rocksdb::NewFixedPrefixTransform(0));
  rocksdb::ColumnFamilyOptions channel_index = plain;
  channel_index.memtable_insert_with_hint_prefix_extractor =
      std::make_shared<ChannelPrefix>();
  return {{rocksdb::kDefaultColumnFamilyName, plain},
          {std::string(layout::kLogFamily), sequential},
          {std::string(layout::kChannelIndexFamily), channel_index},
          {std::string(layout::kIdempotencyFamily), point_lookups},
          {std::string(layout::kMetaFamily), plain}};
}

// Owns the DB and its column family handles; handles are released before
// the DB closes.
struct Database {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> families;

  Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  Database(Database&&) = default;
  Database& operator=(Database&&) = default;
  ~Database() { close(); }

  rocksdb::ColumnFamilyHandle* operator[](Family family) const {
    return families[family];
  }

  rocksdb::Status close() {
    if (!db) return rocksdb::Status::OK();
    for (auto* handle : families) db->DestroyColumnFamilyHandle(handle);
    families.clear();
    rocksdb::Status status = db->Close();
    db.reset();
    return status;
  }
};

class RocksDbLogStore final : public LogStore {
 public:
  // A non-empty `secondary_directory` makes the store read-only: the
  // database is a RocksDB secondary whose own files are there; the store
  // removes that directory when it closes.
  RocksDbLogStore(Database database, const std::filesystem::path& directory,
                  const RocksDbOptions& options, std::uint64_t last_sequence,
                  std::filesystem::path secondary_directory = {})
      : database_(std::move(database)),
        directory_(directory),
        secondary_directory_(std::move(secondary_directory)),
        min_free_bytes_(options.min_free_bytes),
        sequencer_(last_sequence),
        last_sequence_(last_sequence) {
    write_options_.sync = options.durability == Durability::kSync;
  }

  ~RocksDbLogStore() override { (void)close(); }

  using LogStore::append;
  Result<std::vector<Position>> append(
      std::span<AppendEntry> batch,
      const SequencedCallback& on_sequenced) override;
  Result<std::vector<Position>> append_deferred(
      std::span<AppendEntry> batch, DurableCallback on_durable) override;
  Result<void> flush() override;
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
    WakeFlag leader_turn;  // the group before is done: its leader leads this
    WakeFlag done;         // written or failed: `outcome` is set
    Result<void> outcome;
  };
  using GroupPtr = std::shared_ptr<Group>;

  // Checks and sequences `batch` into the open group, which takes
  // `on_durable` (left as it is when no group is returned: an empty batch
  // or a refusal). Takes mutex_.
  Result<std::pair<std::vector<Position>, GroupPtr>> sequence(
      std::span<AppendEntry> batch, DurableCallback&& on_durable);
  // Returns once `group` is done, leading it if nobody else will; called
  // with `lock` on mutex_ held, returns with it released.
  Result<void> finish(std::unique_lock<std::mutex>& lock,
                      const GroupPtr& group);
  Result<void> lead(const GroupPtr& group);
  rocksdb::Status write_group(const std::vector<Member>& members);
  Result<std::uint64_t> durable_last_channel_sequence(
      std::string_view channel) const;
  Result<std::optional<std::uint64_t>> durable_find_key(
      std::string_view key) const;

  // kNoSpace when the file system holding the store is nearly full.
  Result<void> check_free_space();

  bool read_only() const { return !secondary_directory_.empty(); }
  // Read-only stores: replays what the primary wrote since the last call
  // and moves last_sequence_ to the newest record. Takes catch_up_mutex_.
  void catch_up() const;

  Database database_;
  rocksdb::WriteOptions write_options_;
  const std::filesystem::path directory_;
  const std::filesystem::path secondary_directory_;  // empty: read-write
  mutable std::mutex catch_up_mutex_;
  const std::uint64_t min_free_bytes_;
  // The last free-space sample and when it was taken (steady clock, ns).
  std::atomic<std::uint64_t> free_bytes_ = 0;
  std::atomic<std::int64_t> free_checked_at_ = 0;

  // Guards everything below. Held while sequencing, never during a write.
  mutable std::mutex mutex_;
  mutable std::condition_variable appended_;
  // The group new batches join, until its leader seals (resets) it.
  GroupPtr open_group_;
  GroupPtr writing_group_;  // sealed, being written by the active leader
  bool leader_active_ = false;
  std::atomic<bool> closed_ = false;  // also read without the lock
  std::optional<Error> failed_;
  Sequencer sequencer_;
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
  mutable std::atomic<std::uint64_t> last_sequence_;
};

Result<std::vector<Position>> RocksDbLogStore::append(
    std::span<AppendEntry> batch, const SequencedCallback& on_sequenced) {
  auto sequenced = sequence(batch, {});
  if (!sequenced) return std::unexpected(sequenced.error());
  auto& [positions, group] = *sequenced;
  if (on_sequenced) on_sequenced(positions);
  if (!group) return std::move(positions);  // an empty batch
  std::unique_lock lock(mutex_);
  if (auto written = finish(lock, group); !written) {
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
  if (read_only()) {
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
  std::lock_guard lock(mutex_);
  if (closed_) return closed_error();
  if (failed_) return std::unexpected(*failed_);
  auto positions = sequencer_.assign(batch, lookups_);
  if (!positions) return std::unexpected(positions.error());
  if (batch.empty()) return std::pair{std::move(*positions), GroupPtr()};
  if (!open_group_) open_group_ = std::make_shared<Group>();
  open_group_->members.push_back({batch, *positions, std::move(on_durable)});
  return std::pair{std::move(*positions), open_group_};
}

Result<void> RocksDbLogStore::flush() {
  std::unique_lock lock(mutex_);
  const GroupPtr group = open_group_ ? open_group_ : writing_group_;
  if (!group) {
    if (failed_) return std::unexpected(*failed_);
    return {};
  }
  return finish(lock, group);
}

Result<void> RocksDbLogStore::finish(std::unique_lock<std::mutex>& lock,
                                     const GroupPtr& group) {
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

Result<void> RocksDbLogStore::check_free_space() {
  if (min_free_bytes_ == 0) return {};
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count();
  constexpr std::int64_t kSampleEvery = 10'000'000;  // ns
  if (now - free_checked_at_.load() >= kSampleEvery) {
    struct statvfs stats {};
    if (statvfs(directory_.c_str(), &stats) == 0) {
      free_bytes_ = static_cast<std::uint64_t>(stats.f_bavail) * stats.f_frsize;
      free_checked_at_ = now;
    }
  }
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
  std::unique_lock lock(mutex_);
  if (open_group_ == group) open_group_.reset();  // later batches: next group
  writing_group_ = group;
  const std::optional<Error> failed = failed_;
  lock.unlock();
  const std::vector<Member>& members = group->members;
  rocksdb::Status status;
  if (!failed) status = write_group(members);
  lock.lock();
  if (failed) {
    group->outcome = std::unexpected(*failed);
  } else if (status.ok()) {
    for (const Member& member : members) {
      for (const AppendEntry& entry : member.batch) {
        if (!entry.idempotency_key.empty()) {
          sequencer_.key_committed(entry.idempotency_key);
        }
      }
    }
    last_sequence_ = members.back().positions.back().log_sequence;
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
  group->done.set();
  appended_.notify_all();
  return outcome;
}

rocksdb::Status RocksDbLogStore::write_group(
    const std::vector<Member>& members) {
  rocksdb::WriteBatch batch;
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
  return database_.db->Write(write_options_, &batch);
}

Result<void> RocksDbLogStore::read(std::uint64_t from, std::uint64_t to,
                                   const RecordVisitor& visit) const {
  if (closed_) return closed_error();
  std::uint64_t expected = std::max<std::uint64_t>(from, 1);
  const std::uint64_t last = std::min<std::uint64_t>(to, last_sequence_);
  if (expected > last) return {};
  std::string upper = layout::encode_be64(last + 1);
  rocksdb::Slice upper_bound(upper);
  rocksdb::ReadOptions options;
  options.iterate_upper_bound = last == kLastSequence ? nullptr : &upper_bound;
  // A scan: read ahead, and keep it from evicting the block cache.
  options.fill_cache = false;
  options.readahead_size = 2 << 20;
  std::unique_ptr<rocksdb::Iterator> it(
      database_.db->NewIterator(options, database_[kLog]));
  std::vector<std::uint64_t> scratch;
  for (it->Seek(layout::encode_be64(expected)); it->Valid();
       it->Next(), ++expected) {
    auto sequence = layout::decode_be64(view(it->key()));
    if (sequence != expected) {
      return std::unexpected(Error{
          ErrorCode::kCorruption,
          "log sequence " + std::to_string(expected) +
              ": missing from the log (next key found: " +
              (sequence ? std::to_string(*sequence) : "malformed") + ")"});
    }
    std::string_view record =
        schema::aligned_record(view(it->value()), scratch);
    if (auto checked = check_record(record, expected); !checked) {
      return checked;
    }
    if (!visit(expected, record)) return {};
  }
  if (!it->status().ok()) {
    return io_error("reading the log at sequence " + std::to_string(expected),
                    it->status());
  }
  if (expected <= last) {
    return std::unexpected(Error{
        ErrorCode::kCorruption,
        "log sequence " + std::to_string(expected) + ": missing from the log"});
  }
  return {};
}

Result<void> RocksDbLogStore::read_channel(std::string_view channel,
                                           std::uint64_t from, std::uint64_t to,
                                           const ChannelVisitor& visit) const {
  if (closed_) return closed_error();
  if (channel.size() > kMaxChannelIdBytes) return {};
  std::uint64_t expected = std::max<std::uint64_t>(from, 1);
  if (expected > to) return {};
  const std::string prefix = layout::channel_prefix(channel);
  // Past the largest key of this channel: the prefix with its length byte
  // bumped is the next channel length's first key.
  std::string upper = to == kLastSequence
                          ? layout::channel_key(channel, kLastSequence) + '\0'
                          : layout::channel_key(channel, to + 1);
  rocksdb::Slice upper_bound(upper);
  rocksdb::ReadOptions options;
  options.iterate_upper_bound = &upper_bound;
  std::unique_ptr<rocksdb::Iterator> it(
      database_.db->NewIterator(options, database_[kChannelIndex]));
  rocksdb::PinnableSlice pinned;
  std::vector<std::uint64_t> scratch;
  for (it->Seek(layout::channel_key(channel, expected)); it->Valid();
       it->Next(), ++expected) {
    std::string_view key = view(it->key());
    auto channel_sequence =
        key.size() == prefix.size() + 8 && key.starts_with(prefix)
            ? layout::decode_be64(key.substr(prefix.size()))
            : std::nullopt;
    auto sequence = layout::decode_be64(view(it->value()));
    auto corrupt = [&](const std::string& what) {
      return std::unexpected(Error{ErrorCode::kCorruption,
                                   "channel index of " + std::string(channel) +
                                       ", channel sequence " +
                                       std::to_string(expected) + ": " + what});
    };
    if (channel_sequence != expected) return corrupt("entry missing");
    if (!sequence) return corrupt("malformed log sequence");
    pinned.Reset();
    rocksdb::Status status =
        database_.db->Get(rocksdb::ReadOptions(), database_[kLog],
                          layout::encode_be64(*sequence), &pinned);
    if (status.IsNotFound()) {
      return corrupt("points at log sequence " + std::to_string(*sequence) +
                     ", which is missing");
    }
    if (!status.ok()) {
      return io_error("reading log sequence " + std::to_string(*sequence),
                      status);
    }
    std::string_view record = schema::aligned_record(view(pinned), scratch);
    if (auto checked = check_record(record, *sequence, expected); !checked) {
      return checked;
    }
    if (!visit(expected, *sequence, record)) return {};
  }
  if (!it->status().ok()) {
    return io_error("reading the channel index", it->status());
  }
  return {};
}

Result<void> RocksDbLogStore::scan_log(const RecordVisitor& visit) const {
  if (closed_) return closed_error();
  rocksdb::ReadOptions options;
  options.fill_cache = false;
  options.readahead_size = 2 << 20;
  std::unique_ptr<rocksdb::Iterator> it(
      database_.db->NewIterator(options, database_[kLog]));
  std::vector<std::uint64_t> scratch;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto sequence = layout::decode_be64(view(it->key()));
    if (!sequence) {
      return std::unexpected(
          Error{ErrorCode::kCorruption, "log: a key of " +
                                            std::to_string(it->key().size()) +
                                            " bytes is not a log sequence"});
    }
    if (!visit(*sequence, schema::aligned_record(view(it->value()), scratch))) {
      return {};
    }
  }
  if (!it->status().ok()) return io_error("scanning the log", it->status());
  return {};
}

Result<void> RocksDbLogStore::scan_channel_index(
    const ChannelIndexVisitor& visit) const {
  if (closed_) return closed_error();
  std::unique_ptr<rocksdb::Iterator> it(database_.db->NewIterator(
      rocksdb::ReadOptions(), database_[kChannelIndex]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key = view(it->key());
    const std::size_t length =
        key.empty() ? 0 : static_cast<std::uint8_t>(key.front());
    auto channel_sequence = key.size() == 1 + length + 8
                                ? layout::decode_be64(key.substr(1 + length))
                                : std::nullopt;
    auto sequence = layout::decode_be64(view(it->value()));
    if (!channel_sequence || !sequence) {
      return std::unexpected(
          Error{ErrorCode::kCorruption,
                "channel index: malformed entry (key of " +
                    std::to_string(key.size()) + " bytes, value of " +
                    std::to_string(it->value().size()) + " bytes)"});
    }
    if (!visit(key.substr(1, length), *channel_sequence, *sequence)) return {};
  }
  if (!it->status().ok()) {
    return io_error("scanning the channel index", it->status());
  }
  return {};
}

Result<void> RocksDbLogStore::scan_idempotency_index(
    const IdempotencyIndexVisitor& visit) const {
  if (closed_) return closed_error();
  std::unique_ptr<rocksdb::Iterator> it(database_.db->NewIterator(
      rocksdb::ReadOptions(), database_[kIdempotency]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    auto sequence = layout::decode_be64(view(it->value()));
    if (!sequence) {
      return std::unexpected(
          Error{ErrorCode::kCorruption,
                "idempotency index: key '" + it->key().ToString() +
                    "' holds a malformed log sequence of " +
                    std::to_string(it->value().size()) + " bytes"});
    }
    if (!visit(view(it->key()), *sequence)) return {};
  }
  if (!it->status().ok()) {
    return io_error("scanning the idempotency index", it->status());
  }
  return {};
}

Result<std::optional<std::uint64_t>> RocksDbLogStore::find_idempotency_key(
    std::string_view key) const {
  if (closed_) return closed_error();
  return durable_find_key(key);
}

Result<std::optional<std::uint64_t>> RocksDbLogStore::durable_find_key(
    std::string_view key) const {
  std::string value;
  rocksdb::Status status = database_.db->Get(
      rocksdb::ReadOptions(), database_[kIdempotency], slice(key), &value);
  if (status.IsNotFound()) return std::nullopt;
  if (!status.ok()) return io_error("reading the idempotency index", status);
  auto sequence = layout::decode_be64(value);
  if (!sequence) {
    return std::unexpected(
        Error{ErrorCode::kCorruption,
              "idempotency index: malformed log sequence of " +
                  std::to_string(value.size()) + " bytes"});
  }
  return *sequence;
}

Result<std::uint64_t> RocksDbLogStore::last_channel_sequence(
    std::string_view channel) const {
  if (closed_) return closed_error();
  return durable_last_channel_sequence(channel);
}

Result<std::uint64_t> RocksDbLogStore::durable_last_channel_sequence(
    std::string_view channel) const {
  if (channel.size() > kMaxChannelIdBytes) return 0;
  const std::string prefix = layout::channel_prefix(channel);
  std::unique_ptr<rocksdb::Iterator> it(database_.db->NewIterator(
      rocksdb::ReadOptions(), database_[kChannelIndex]));
  it->SeekForPrev(layout::channel_key(channel, kLastSequence));
  if (!it->status().ok()) {
    return io_error("reading the channel index", it->status());
  }
  if (!it->Valid() || !view(it->key()).starts_with(prefix)) return 0;
  auto sequence = layout::decode_be64(view(it->key()).substr(prefix.size()));
  if (!sequence) {
    return std::unexpected(
        Error{ErrorCode::kCorruption,
              "channel index of " + std::string(channel) + ": malformed key"});
  }
  return *sequence;
}

std::uint64_t RocksDbLogStore::wait_for_append(
    std::uint64_t after, std::chrono::milliseconds timeout) const {
  if (read_only()) {
    // Nothing signals a secondary: poll the primary's files.
    constexpr std::chrono::milliseconds kPoll{50};
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      catch_up();
      if (closed_ || last_sequence_ > after) return last_sequence_;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return last_sequence_;
      std::unique_lock lock(mutex_);
      appended_.wait_for(
          lock, std::min<std::chrono::nanoseconds>(kPoll, deadline - now));
    }
  }
  std::unique_lock lock(mutex_);
  appended_.wait_for(lock, timeout,
                     [&] { return closed_ || last_sequence_ > after; });
  return last_sequence_;
}

Result<void> RocksDbLogStore::close() {
  std::unique_lock lock(mutex_);
  if (closed_ && !database_.db) return {};
  closed_ = true;
  if (open_group_) {
    // Deferred batches nobody has written yet: write them now.
    const GroupPtr group = open_group_;
    (void)finish(lock, group);  // failures reach the members
    lock.lock();
  }
  appended_.notify_all();
  appended_.wait(lock, [&] { return !leader_active_; });
  rocksdb::Status status;
  {
    std::lock_guard catching_up(catch_up_mutex_);
    status = database_.close();
  }
  if (read_only()) {
    std::error_code ignored;
    std::filesystem::remove_all(secondary_directory_, ignored);
  }
  if (!status.ok()) return io_error("closing the log store", status);
  return {};
}

// --- opening ----------------------------------------------------------------

struct Opened {
  Database database;
  RecoveryReport report;
};

rocksdb::Status open_database(const std::filesystem::path& directory,
                              rocksdb::Options options, Database& database) {
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = families();
  rocksdb::DB* db = nullptr;
  database.families.clear();
  rocksdb::Status status = rocksdb::DB::Open(
      options, directory.string(), descriptors, &database.families, &db);
  database.db.reset(db);
  return status;
}

Result<Opened> open_recovering(const std::filesystem::path& directory,
                               const RocksDbOptions& store_options) {
  std::error_code ignored;
  Opened opened;
  opened.report.created =
      !std::filesystem::exists(directory / "CURRENT", ignored);
  if (opened.report.created && !store_options.create_if_missing) {
    return std::unexpected(Error{ErrorCode::kNotFound,
                                 "no Parley store at " + directory.string()});
  }
  rocksdb::Options options;
  options.create_if_missing = opened.report.created;
  options.create_missing_column_families = opened.report.created;
  options.max_background_jobs = 2;
  options.keep_log_file_num = 4;
  options.allow_concurrent_memtable_write = false;  // see families()
  if (store_options.env != nullptr) options.env = store_options.env;

  if (!opened.report.created) {
    std::vector<std::string> names;
    rocksdb::Status listed =
        rocksdb::DB::ListColumnFamilies(options, directory.string(), &names);
    if (!listed.ok()) return io_error("opening " + directory.string(), listed);
    if (std::find(names.begin(), names.end(), layout::kMetaFamily) ==
        names.end()) {
      return std::unexpected(Error{
          ErrorCode::kCorruption, directory.string() +
                                      " is a RocksDB database but not a Parley "
                                      "store (no 'meta' column family)"});
    }
  }

  // First strict: any WAL damage fails. Then, only if that found
  // corruption, tolerate an incomplete tail: if the second open succeeds
  // the damage was a torn tail; if it fails too, it is mid-log corruption.
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kAbsoluteConsistency;
  rocksdb::Status strict = open_database(directory, options, opened.database);
  if (strict.ok()) return opened;
  if (strict.IsIOError() &&
      strict.ToString().find("lock") != std::string::npos) {
    return std::unexpected(
        Error{ErrorCode::kBusy, directory.string() +
                                    " is locked by another process (" +
                                    strict.ToString() + ")"});
  }
  if (!strict.IsCorruption()) {
    return io_error("opening " + directory.string(), strict);
  }
  options.wal_recovery_mode =
      rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  rocksdb::Status tolerant = open_database(directory, options, opened.database);
  if (!tolerant.ok()) {
    return std::unexpected(
        Error{ErrorCode::kCorruption,
              "refusing to open " + directory.string() +
                  ": the RocksDB WAL is damaged before its end (" +
                  tolerant.ToString() + "); nothing was dropped"});
  }
  opened.report.torn_tail = true;
  opened.report.detail = strict.ToString();
  return opened;
}

// A store that is new (`empty_log`) gets the version written, unless
// `read_only`.
Result<void> check_format_version(Database& database, bool empty_log,
                                  bool read_only = false) {
  std::string version;
  rocksdb::Status status =
      database.db->Get(rocksdb::ReadOptions(), database[kMeta],
                       slice(layout::kFormatVersionKey), &version);
  if (status.ok()) {
    if (version == layout::kFormatVersion) return {};
    return std::unexpected(Error{ErrorCode::kVersionMismatch,
                                 "store format version " + version +
                                     ", this build reads version " +
                                     std::string(layout::kFormatVersion)});
  }
  if (!status.IsNotFound())
    return io_error("reading the format version", status);
  if (!empty_log) {
    return std::unexpected(Error{
        ErrorCode::kCorruption, "the store has records but no format version"});
  }
  if (read_only) return {};
  rocksdb::WriteOptions sync;
  sync.sync = true;
  status =
      database.db->Put(sync, database[kMeta], slice(layout::kFormatVersionKey),
                       slice(layout::kFormatVersion));
  if (!status.ok()) return io_error("writing the format version", status);
  return {};
}

// The newest record's key and stamp must agree; a full check is
// `parley audit`'s job.
Result<std::uint64_t> find_last_sequence(const Database& database) {
  std::unique_ptr<rocksdb::Iterator> it(
      database.db->NewIterator(rocksdb::ReadOptions(), database[kLog]));
  it->SeekToLast();
  if (!it->status().ok()) return io_error("reading the log", it->status());
  if (!it->Valid()) return 0;
  auto sequence = layout::decode_be64(view(it->key()));
  if (!sequence) {
    return std::unexpected(
        Error{ErrorCode::kCorruption, "the newest log key is malformed"});
  }
  std::vector<std::uint64_t> scratch;
  if (auto checked = check_record(
          schema::aligned_record(view(it->value()), scratch), *sequence);
      !checked) {
    return std::unexpected(checked.error());
  }
  return *sequence;
}

void RocksDbLogStore::catch_up() const {
  std::lock_guard lock(catch_up_mutex_);
  if (closed_ || !database_.db) return;
  // A failed catch-up leaves the view where it was; the next one retries.
  if (!database_.db->TryCatchUpWithPrimary().ok()) return;
  auto last = find_last_sequence(database_);
  if (last && *last > last_sequence_) last_sequence_ = *last;
}

// A fresh directory for a secondary instance's own files.
Result<std::filesystem::path> make_secondary_directory() {
  std::error_code error;
  std::filesystem::path base = std::filesystem::temp_directory_path(error);
  if (error) base = "/tmp";
  std::string pattern = (base / "parley-secondary-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return std::unexpected(Error{ErrorCode::kIoError,
                                 "cannot create a directory under " +
                                     base.string() + " for a read-only view"});
  }
  return std::filesystem::path(pattern);
}

}  // namespace

Result<std::unique_ptr<LogStore>> open_rocksdb_log_store_read_only(
    const std::filesystem::path& directory) {
  std::error_code ignored;
  if (!std::filesystem::exists(directory / "CURRENT", ignored)) {
    return std::unexpected(Error{ErrorCode::kNotFound,
                                 "no Parley store at " + directory.string()});
  }
  rocksdb::Options options;
  options.max_open_files = -1;  // required of a secondary
  std::vector<std::string> names;
  rocksdb::Status listed =
      rocksdb::DB::ListColumnFamilies(options, directory.string(), &names);
  if (!listed.ok()) return io_error("opening " + directory.string(), listed);
  if (std::find(names.begin(), names.end(), layout::kMetaFamily) ==
      names.end()) {
    return std::unexpected(Error{ErrorCode::kCorruption,
                                 directory.string() +
                                     " is a RocksDB database but not a Parley "
                                     "store (no 'meta' column family)"});
  }
  auto secondary = make_secondary_directory();
  if (!secondary) return std::unexpected(secondary.error());
  Database database;
  auto discard = [&](Error error) {
    (void)database.close();
    std::filesystem::remove_all(*secondary, ignored);
    return std::unexpected(std::move(error));
  };
  rocksdb::DB* db = nullptr;
  rocksdb::Status status = rocksdb::DB::OpenAsSecondary(
      options, directory.string(), secondary->string(), families(),
      &database.families, &db);
  database.db.reset(db);
  if (!status.ok()) {
    return discard(
        io_error("opening " + directory.string() + " read-only", status)
            .error());
  }
  auto last = find_last_sequence(database);
  if (!last) return discard(last.error());
  if (auto version = check_format_version(database, *last == 0, true);
      !version) {
    return discard(version.error());
  }
  return std::make_unique<RocksDbLogStore>(std::move(database), directory,
                                           RocksDbOptions{}, *last,
                                           std::move(*secondary));
}

Result<OpenedLogStore> open_rocksdb_log_store(
    const std::filesystem::path& directory, const RocksDbOptions& options) {
  auto opened = open_recovering(directory, options);
  if (!opened) return std::unexpected(opened.error());
  auto last = find_last_sequence(opened->database);
  if (!last) return std::unexpected(last.error());
  if (auto version = check_format_version(opened->database, *last == 0);
      !version) {
    return std::unexpected(version.error());
  }
  return OpenedLogStore{
      std::make_unique<RocksDbLogStore>(std::move(opened->database), directory,
                                        options, *last),
      std::move(opened->report)};
}

}  // namespace parley::log
