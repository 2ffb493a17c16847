// The pluggable log: the single source of truth of a Parley hub.
//
// A LogStore holds records (schemas/log.fbs) in one global order with a
// dense log sequence 1, 2, 3, ... It knows records only as bytes plus the
// keys it indexes: the channel a record belongs to (channel index, with a
// dense per-channel sequence) and an optional idempotency key. It never
// interprets what a record means.
//
// Thread safety: every member may be called from any thread concurrently,
// except close(), which must not race with reads still in progress.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "log/commit_stats.h"
#include "log/error.h"

namespace parley::log {

inline constexpr std::uint64_t kLastSequence =
    std::numeric_limits<std::uint64_t>::max();

// Longest channel id the channel index accepts.
inline constexpr std::size_t kMaxChannelIdBytes = 255;

// Largest record a batch may hold.
inline constexpr std::size_t kMaxRecordBytes = 16 << 20;

enum class Durability {
  kSync,   // an append is acked only after its batch is fsynced (default)
  kAsync,  // acked once written to the OS; survives a process crash, not
           // necessarily a power loss
};

struct Position {
  std::uint64_t log_sequence = 0;
  std::uint64_t channel_sequence = 0;  // 0 when the entry has no channel
};

// One record to append. On success the store has stamped the record's
// `log_sequence` and `channel_sequence` into `record` in place, so the
// caller holds exactly the bytes that were written, and set `position`.
struct AppendEntry {
  std::string record;   // a Record built by schemas/record.h
  std::string channel;  // non-empty: indexed with the next channel sequence
  std::string idempotency_key;  // non-empty: indexed; must not exist yet
  // True only for a record just made by schemas/record.h's builders, which
  // make records that pass schema::verify_record once the store has
  // stamped their sequences (and, for one built with
  // ChecksumStamp::kWithSequences, its checksum): the store does not verify
  // it (builds with assertions do, after stamping, and abort if it fails).
  // Bytes from anywhere else (a file, another store, a replica) leave it
  // false and are verified.
  bool freshly_built = false;
  Position position;  // set by the store once it has sequenced the entry
};

// The positions of a sequenced batch's entries, in batch order.
std::vector<Position> positions_of(std::span<const AppendEntry> batch);

// Visitors see bytes valid only during the call, starting on a
// schema::kRecordAlignment boundary so FlatBuffers can read them in place;
// return false to stop.
using RecordVisitor =
    std::function<bool(std::uint64_t log_sequence, std::string_view record)>;
using ChannelVisitor =
    std::function<bool(std::uint64_t channel_sequence,
                       std::uint64_t log_sequence, std::string_view record)>;
// One channel-index entry as stored: (channel, channel sequence) -> log
// sequence.
using ChannelIndexVisitor =
    std::function<bool(std::string_view channel, std::uint64_t channel_sequence,
                       std::uint64_t log_sequence)>;
// One idempotency-index entry as stored: key -> log sequence.
using IdempotencyIndexVisitor =
    std::function<bool(std::string_view key, std::uint64_t log_sequence)>;

class LogStore {
 public:
  virtual ~LogStore() = default;

  // Called by append() once the batch holds its sequences (each entry's
  // `position`, stamped into its record), before append() waits for the
  // batch to be durable. Every
  // append that starts after the callback returned is sequenced after this
  // batch, so a caller that serialises its appends may release its own lock
  // here and let the next batch join the same group commit. Runs on the
  // appending thread, with no lock of the store held.
  using SequencedCallback = std::function<void()>;

  // Appends `batch` atomically: all of it or none. Sequences are assigned in
  // batch order, densely after everything appended before; each entry's
  // `position` holds its own, and they are returned in batch order. Fails with
  // kInvalidArgument (a record fails verification or is larger than
  // kMaxRecordBytes, a channel id is longer than kMaxChannelIdBytes), kConflict
  // (an idempotency key is already in the log or twice in flight), kFailed or
  // kClosed; nothing is written then (and `on_sequenced` is not called). When
  // the write or a sync fails after `on_sequenced` ran, fails with kIoError or
  // kFailed and the store is failed from then on. Concurrent appends are
  // group-committed.
  virtual Result<std::vector<Position>> append(
      std::span<AppendEntry> batch, const SequencedCallback& on_sequenced) = 0;
  Result<std::vector<Position>> append(std::span<AppendEntry> batch) {
    return append(batch, {});
  }

  // Told once a batch append_deferred() sequenced is durable, or the error
  // that lost it (kIoError, kFailed). Runs on the thread that wrote the
  // batch's group, with no lock of the store held; may end the storage of
  // the batch.
  using DurableCallback = std::function<void(Result<void>)>;

  // append() without the wait, for a caller that sequences several batches
  // before it waits for any: checks and sequences `batch` as append() does
  // (each entry's `position`), leaving it to be written with a later group
  // commit — the one a flush() or an append() starts. `on_durable` is told
  // the outcome; the caller keeps `batch` alive and unchanged until then.
  // A refusal before sequencing is returned and nothing is told. The
  // default appends and tells before it returns.
  virtual Result<void> append_deferred(std::span<AppendEntry> batch,
                                       DurableCallback on_durable);

  // Makes every batch sequenced before the call durable: writes the ones
  // no thread is writing yet as one group commit, or waits for the thread
  // that does. Fails as append() does when that group fails. The default
  // has nothing to wait for.
  virtual Result<void> flush() { return {}; }

  // After appends failed with a transient error (is_transient: the disk
  // filled up while a batch was being written, the connection to the
  // database was lost): makes the store accept appends again once there is
  // room, or it has reconnected. Fails with that transient code while it
  // cannot yet, kFailed when a fatal failure stopped the store. Returns at
  // once on a store that accepts appends. Batches sequenced before the
  // failure are failed first, and the next append takes the sequence after
  // the last durable record. The default has nothing to resume.
  virtual Result<void> resume() { return {}; }

  // Visits records with from <= log_sequence <= to in order. Every record
  // passes the FlatBuffers Verifier and carries the sequence it is stored
  // under, or the read stops with kCorruption naming the log sequence.
  virtual Result<void> read(std::uint64_t from, std::uint64_t to,
                            const RecordVisitor& visit) const = 0;

  // Visits one channel's records with from <= channel_sequence <= to, in
  // order, with the same checks as read().
  virtual Result<void> read_channel(std::string_view channel,
                                    std::uint64_t from, std::uint64_t to,
                                    const ChannelVisitor& visit) const = 0;

  // Raw scans for `parley audit`, which compares the indexes with a full
  // scan of the log. Each visits every entry the store holds, in key order,
  // as stored: no Verifier, no density check, no check that an index entry
  // points at a record. A key or value that cannot be decoded at all (not
  // 8 bytes where 8 are due) stops the scan with kCorruption naming it.
  // Taken while appends may run: entries appended meanwhile may be missed.
  virtual Result<void> scan_log(const RecordVisitor& visit) const = 0;
  virtual Result<void> scan_channel_index(
      const ChannelIndexVisitor& visit) const = 0;
  virtual Result<void> scan_idempotency_index(
      const IdempotencyIndexVisitor& visit) const = 0;

  // The log sequence of the record indexed under `key`, if any.
  virtual Result<std::optional<std::uint64_t>> find_idempotency_key(
      std::string_view key) const = 0;

  // Heap the store holds as caches bounded by its configuration (RocksDB:
  // the block cache's usage): memory that is not growth.
  virtual std::uint64_t cache_bytes() const { return 0; }

  // What the store's group commits have done since it opened (all zero for
  // a store that keeps no counts).
  virtual CommitStatsSnapshot commit_stats() const { return {}; }

  // The highest acked log sequence (0 for an empty log).
  virtual std::uint64_t last_sequence() const = 0;

  // The highest sequence of `channel` (0 when it has no records).
  virtual Result<std::uint64_t> last_channel_sequence(
      std::string_view channel) const = 0;

  // Blocks until last_sequence() > after, the timeout passes or the store
  // closes; returns last_sequence() then.
  virtual std::uint64_t wait_for_append(
      std::uint64_t after, std::chrono::milliseconds timeout) const = 0;

  // Waits for appends in flight, then releases the store. Further calls
  // fail with kClosed. Idempotent.
  virtual Result<void> close() = 0;
};

}  // namespace parley::log
