// The RocksDB LogStore's read side: reads by log and channel sequence, the
// raw scans `parley audit` uses, the indexes, and (read-only stores)
// following the primary that writes the store.
#include <algorithm>
#include <chrono>
#include <thread>

#include "log/record_check.h"
#include "log/rocksdb_layout.h"
#include "log/rocksdb_store.h"
#include "schemas/record.h"

namespace parley::log::rocksdb_backend {

namespace layout = rocksdb_layout;

namespace {

// A scan that finds a key missing looks it up before calling it missing, and
// reads on from it this many times at most when the lookup finds it.
constexpr int kMaxRescans = 3;
// A read-only store follows a live writer through a RocksDB secondary,
// whose view can for a moment lack entries the writer has just flushed
// (the flushed table not yet seen, the WAL that held them already
// retired). Before a gap there is called damage, such a store catches up
// with the writer and looks again, up to this many times, 10 ms apart.
constexpr int kMaxFollowRetries = 20;
constexpr std::chrono::milliseconds kFollowRetryPause{10};

// Whether `it` stands on an entry, read without error.
bool readable_at(const rocksdb::Iterator& it) {
  return it.Valid() && it.status().ok();
}

// Whether `key` is in `family`, by a point lookup. RocksDB 7.8's iterator
// can pass over the keys of a table file whose block it failed to read, its
// status OK, and go on with the next file's keys: a key a scan did not find
// is missing only if a lookup does not find it either. A lookup that fails
// names the read error; one that finds it met a read error that passed.
Result<bool> has_key(const Database& database, Family family,
                     std::string_view key, const std::string& context) {
  rocksdb::PinnableSlice value;
  rocksdb::Status status =
      database.db->Get(rocksdb::ReadOptions(), database[family], key, &value);
  if (status.IsNotFound()) return false;
  if (!status.ok()) return io_error(context, status);
  return true;
}

}  // namespace

Result<void> RocksDbLogStore::check_readable() const {
  if (group_commit_.closed()) return closed_error();
  if (read_only_) {
    MutexLock lock(catch_up_mutex_);
    if (catch_up_error_) return std::unexpected(*catch_up_error_);
  }
  if (!database_.db) {
    if (unreadable_) return std::unexpected(*unreadable_);
    return std::unexpected(Error{ErrorCode::kFailed,
                                 "the log is unreadable: reopening it "
                                 "failed; reopen the store"});
  }
  return {};
}

Result<void> RocksDbLogStore::read(std::uint64_t from, std::uint64_t to,
                                   const RecordVisitor& visit) const {
  ReaderLock reading(database_mutex_);
  if (auto readable = check_readable(); !readable) {
    return std::unexpected(readable.error());
  }
  std::uint64_t expected = std::max<std::uint64_t>(from, 1);
  const std::uint64_t last =
      std::min<std::uint64_t>(to, group_commit_.last_sequence());
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
  int rescans = 0;
  int follow_retries = 0;
  for (it->Seek(layout::encode_be64(expected));;) {
    std::optional<std::uint64_t> found;  // the key the iterator stands on
    if (readable_at(*it)) {
      found = layout::decode_be64(view(it->key()));
      if (found == expected) {
        std::string_view record =
            schema::aligned_record(view(it->value()), scratch);
        if (auto checked = check_record(record, expected); !checked) {
          return checked;
        }
        if (!visit(expected, record)) return {};
        it->Next();
        ++expected;
        continue;
      }
    } else if (!it->status().ok()) {
      return io_error("reading the log at sequence " + std::to_string(expected),
                      it->status());
    } else if (expected > last) {
      return {};
    }
    const std::string key = layout::encode_be64(expected);
    auto present = has_key(database_, kLog, key,
                           "reading log sequence " + std::to_string(expected));
    if (!present) return std::unexpected(present.error());
    if (*present && ++rescans <= kMaxRescans) {
      it.reset(database_.db->NewIterator(options, database_[kLog]));
      it->Seek(key);
      continue;
    }
    if (!*present && caught_up_after_gap(it, follow_retries)) {
      it.reset(database_.db->NewIterator(options, database_[kLog]));
      it->Seek(key);
      continue;
    }
    std::string next;
    if (it->Valid()) {
      next = " (next key found: " +
             (found ? std::to_string(*found) : std::string("malformed")) + ")";
    }
    return std::unexpected(Error{ErrorCode::kCorruption,
                                 "log sequence " + std::to_string(expected) +
                                     ": missing from the log" + next});
  }
}

Result<void> RocksDbLogStore::read_channel(std::string_view channel,
                                           std::uint64_t from, std::uint64_t to,
                                           const ChannelVisitor& visit) const {
  ReaderLock reading(database_mutex_);
  if (auto readable = check_readable(); !readable) {
    return std::unexpected(readable.error());
  }
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
  std::unique_ptr<rocksdb::Iterator> it;
  rocksdb::PinnableSlice pinned;
  std::vector<std::uint64_t> scratch;
  std::vector<std::uint64_t> run;  // the log sequences of the entry read
  // The channel sequence of the entry `it` stands on, if it is this
  // channel's and well-formed.
  auto first_of_entry = [&]() -> std::optional<std::uint64_t> {
    const std::string_view key = view(it->key());
    if (key.size() != prefix.size() + 8 || !key.starts_with(prefix)) {
      return std::nullopt;
    }
    return layout::decode_be64(key.substr(prefix.size()));
  };
  rocksdb::DB& db = *database_.db;
  rocksdb::ColumnFamilyHandle* const channel_index = database_[kChannelIndex];
  rocksdb::ColumnFamilyHandle* const log_family = database_[kLog];
  // Places a fresh iterator on the entry holding `expected`, which may start
  // before it (rocksdb_layout.h), or on a run before it that does not
  // decode (named by the loop below, as is a read error), or else on the
  // first entry after it.
  auto seek = [&] {
    const std::string wanted = layout::channel_key(channel, expected);
    it.reset(db.NewIterator(options, channel_index));
    it->SeekForPrev(wanted);
    if (!it->status().ok()) return;
    if (it->Valid()) {
      auto first = first_of_entry();
      if (first && (!layout::decode_index_run(view(it->value()), run) ||
                    expected - *first < run.size())) {
        return;
      }
    }
    it->Seek(wanted);
  };
  auto corrupt = [&](const std::string& what) {
    return std::unexpected(Error{ErrorCode::kCorruption,
                                 "channel index of " + std::string(channel) +
                                     ", channel sequence " +
                                     std::to_string(expected) + ": " + what});
  };
  int rescans = 0;
  int follow_retries = 0;
  seek();
  while (true) {
    if (!readable_at(*it)) {
      if (!it->status().ok()) {
        return io_error("reading the channel index", it->status());
      }
      return {};  // no entry of this channel from `expected` up to `to`
    }
    auto first = first_of_entry();
    if (first && *first <= expected) {
      if (!layout::decode_index_run(view(it->value()), run)) {
        return corrupt("malformed log sequences");
      }
      // (A run that ends before `expected` is the one before it: skipped.)
      for (std::size_t i = expected - *first; i < run.size(); ++i) {
        if (expected > to) return {};
        const std::uint64_t sequence = run[i];
        pinned.Reset();
        rocksdb::Status status = db.Get(rocksdb::ReadOptions(), log_family,
                                        layout::encode_be64(sequence), &pinned);
        if (status.IsNotFound()) {
          return corrupt("points at log sequence " + std::to_string(sequence) +
                         ", which is missing");
        }
        if (!status.ok()) {
          return io_error("reading log sequence " + std::to_string(sequence),
                          status);
        }
        std::string_view record = schema::aligned_record(view(pinned), scratch);
        if (auto checked = check_record(record, sequence, expected); !checked) {
          return checked;
        }
        if (!visit(expected, sequence, record)) return {};
        ++expected;
      }
      it->Next();
      continue;
    }
    // The entry holding `expected` starts there (the one before ended just
    // before it). As read() does: a read error the iterator passed over, or
    // missing.
    auto present = has_key(
        database_, kChannelIndex, layout::channel_key(channel, expected),
        "reading the channel index of " + std::string(channel));
    if (!present) return std::unexpected(present.error());
    if (*present && ++rescans <= kMaxRescans) {
      seek();
      continue;
    }
    if (!*present && caught_up_after_gap(it, follow_retries)) {
      seek();
      continue;
    }
    return corrupt("entry missing");
  }
}

Result<void> RocksDbLogStore::scan_log(const RecordVisitor& visit) const {
  ReaderLock reading(database_mutex_);
  if (auto readable = check_readable(); !readable) {
    return std::unexpected(readable.error());
  }
  rocksdb::ReadOptions options;
  options.fill_cache = false;
  options.readahead_size = 2 << 20;
  std::unique_ptr<rocksdb::Iterator> it(
      database_.db->NewIterator(options, database_[kLog]));
  std::vector<std::uint64_t> scratch;
  std::uint64_t next = 1;  // a dense log's next key
  int rescans = 0;
  for (it->SeekToFirst(); readable_at(*it); it->Next()) {
    auto malformed = [&] {
      return std::unexpected(
          Error{ErrorCode::kCorruption, "log: a key of " +
                                            std::to_string(it->key().size()) +
                                            " bytes is not a log sequence"});
    };
    auto sequence = layout::decode_be64(view(it->key()));
    if (!sequence) return malformed();
    if (*sequence > next) {
      // As read() does: a read error the iterator passed over, or a gap
      // the caller (the audit) reports.
      const std::string key = layout::encode_be64(next);
      auto present = has_key(database_, kLog, key,
                             "reading log sequence " + std::to_string(next));
      if (!present) return std::unexpected(present.error());
      if (*present && ++rescans <= kMaxRescans) {
        it.reset(database_.db->NewIterator(options, database_[kLog]));
        it->Seek(key);
        if (!readable_at(*it)) break;
        sequence = layout::decode_be64(view(it->key()));
        if (!sequence) return malformed();
      }
    }
    next = *sequence + 1;
    if (!visit(*sequence, schema::aligned_record(view(it->value()), scratch))) {
      return {};
    }
  }
  if (!it->status().ok()) return io_error("scanning the log", it->status());
  return {};
}

Result<void> RocksDbLogStore::scan_channel_index(
    const ChannelIndexVisitor& visit) const {
  ReaderLock reading(database_mutex_);
  if (auto readable = check_readable(); !readable) {
    return std::unexpected(readable.error());
  }
  std::unique_ptr<rocksdb::Iterator> it(database_.db->NewIterator(
      rocksdb::ReadOptions(), database_[kChannelIndex]));
  std::vector<std::uint64_t> run;
  for (it->SeekToFirst(); readable_at(*it); it->Next()) {
    std::string_view key = view(it->key());
    const std::size_t length =
        key.empty() ? 0 : static_cast<std::uint8_t>(key.front());
    auto channel_sequence = key.size() == 1 + length + 8
                                ? layout::decode_be64(key.substr(1 + length))
                                : std::nullopt;
    if (!channel_sequence ||
        !layout::decode_index_run(view(it->value()), run)) {
      return std::unexpected(
          Error{ErrorCode::kCorruption,
                "channel index: malformed entry (key of " +
                    std::to_string(key.size()) + " bytes, value of " +
                    std::to_string(it->value().size()) + " bytes)"});
    }
    for (std::size_t i = 0; i < run.size(); ++i) {
      if (!visit(key.substr(1, length), *channel_sequence + i, run[i])) {
        return {};
      }
    }
  }
  if (!it->status().ok()) {
    return io_error("scanning the channel index", it->status());
  }
  return {};
}

Result<void> RocksDbLogStore::scan_idempotency_index(
    const IdempotencyIndexVisitor& visit) const {
  ReaderLock reading(database_mutex_);
  if (auto readable = check_readable(); !readable) {
    return std::unexpected(readable.error());
  }
  std::unique_ptr<rocksdb::Iterator> it(database_.db->NewIterator(
      rocksdb::ReadOptions(), database_[kIdempotency]));
  for (it->SeekToFirst(); readable_at(*it); it->Next()) {
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
  ReaderLock reading(database_mutex_);
  if (auto readable = check_readable(); !readable) {
    return std::unexpected(readable.error());
  }
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

std::uint64_t RocksDbLogStore::cache_bytes() const {
  ReaderLock reading(database_mutex_);
  std::uint64_t usage = 0;
  if (!database_.db ||
      !database_.db->GetIntProperty(
          database_[kLog], rocksdb::DB::Properties::kBlockCacheUsage, &usage)) {
    return 0;
  }
  return usage;
}

Result<std::uint64_t> RocksDbLogStore::last_channel_sequence(
    std::string_view channel) const {
  ReaderLock reading(database_mutex_);
  if (auto readable = check_readable(); !readable) {
    return std::unexpected(readable.error());
  }
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
  std::uint64_t last = 0;
  if (it->Valid() && view(it->key()).starts_with(prefix)) {
    auto first = layout::decode_be64(view(it->key()).substr(prefix.size()));
    if (!first) {
      return std::unexpected(Error{
          ErrorCode::kCorruption,
          "channel index of " + std::string(channel) + ": malformed key"});
    }
    std::vector<std::uint64_t> run;
    if (!layout::decode_index_run(view(it->value()), run)) {
      return std::unexpected(Error{
          ErrorCode::kCorruption,
          "channel index of " + std::string(channel) + ", channel sequence " +
              std::to_string(*first) + ": malformed log sequences"});
    }
    last = *first + run.size() - 1;
  }
  // The next channel sequence is numbered from this one: an iterator that
  // passed over a table file it failed to read (see has_key) would have the
  // next append overwrite an index entry. The entry after it must be absent.
  auto next =
      has_key(database_, kChannelIndex, layout::channel_key(channel, last + 1),
              "reading the channel index of " + std::string(channel));
  if (!next) return std::unexpected(next.error());
  if (*next) {
    return std::unexpected(
        Error{ErrorCode::kIoError,
              "reading the channel index of " + std::string(channel) +
                  ": its last entry read as " + std::to_string(last) +
                  ", yet entry " + std::to_string(last + 1) +
                  " exists (a read error passed over)"});
  }
  return last;
}

std::uint64_t RocksDbLogStore::wait_for_append(
    std::uint64_t after, std::chrono::milliseconds timeout) const {
  // Nothing signals a secondary: it polls the primary's files.
  std::function<void()> poll;
  if (read_only_) poll = [this] { catch_up(); };
  return group_commit_.wait_for_append(after, timeout, poll);
}

bool RocksDbLogStore::caught_up_after_gap(
    std::unique_ptr<rocksdb::Iterator>& it, int& retries) const {
  if (!read_only_ || retries >= kMaxFollowRetries) return false;
  ++retries;
  it.reset();  // lets go of the view the gap was seen in
  std::this_thread::sleep_for(kFollowRetryPause);
  catch_up_held();
  return true;
}

void RocksDbLogStore::catch_up() const {
  ReaderLock reading(database_mutex_);
  catch_up_held();
}

void RocksDbLogStore::catch_up_held() const {
  MutexLock lock(catch_up_mutex_);
  if (group_commit_.closed() || !database_.db || catch_up_error_) return;
  rocksdb::Status status = database_.db->TryCatchUpWithPrimary();
  if (status.IsCorruption()) {
    catch_up_error_ = io_error("following " + directory_.string() +
                                   " found the store damaged",
                               status)
                          .error();
    return;
  }
  // Any other failure (a file the primary deleted meanwhile) leaves the
  // view where it was; the next catch-up retries.
  if (!status.ok()) return;
  auto last = find_last_sequence(database_);
  if (!last) {
    catch_up_error_ = last.error();
    return;
  }
  group_commit_.caught_up(*last);
}

}  // namespace parley::log::rocksdb_backend
