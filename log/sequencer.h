// Validates append batches and assigns their sequences; shared by every
// LogStore backend so that all of them accept and number records alike.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "log/log_store.h"
#include "log/string_map.h"

namespace parley::log {

// Not thread safe: the owning backend calls it under the lock that orders
// its appends. Sequences it hands out are final once the backend commits
// them; a backend whose commit fails must refuse further appends, because
// the sequencer has already moved past the lost batch.
class Sequencer {
 public:
  // What the backend knows durably, asked for keys the sequencer has not
  // seen yet.
  struct Lookups {
    std::function<Result<std::uint64_t>(std::string_view channel)>
        last_channel_sequence;
    std::function<Result<bool>(std::string_view key)> key_exists;
  };

  explicit Sequencer(std::uint64_t last_log_sequence)
      : last_log_sequence_(last_log_sequence) {}

  // Checks what needs no sequencer state: every record verifies (unless
  // freshly built) and can be stamped, every channel id fits. Thread safe;
  // call it before taking the lock that guards assign().
  static Result<void> check_entries(std::span<AppendEntry> batch);

  // Checks that no idempotency key of a batch that passed check_entries is
  // in use, then numbers the batch (each entry's `position`) and writes the
  // records' sequences (schema::write_sequences). On error nothing changed.
  // The records' checksums are stale until stamp_checksums(): the backend
  // stamps them before it writes them, outside the lock that orders its
  // appends, since hashing a record takes longer than numbering it.
  Result<void> assign(std::span<AppendEntry> batch, const Lookups& lookups);
  // Stamps each record's checksum over the sequences assign() wrote; the
  // records pass schema::verify_record after. Thread safe for batches no
  // other thread writes.
  static void stamp_checksums(std::span<AppendEntry> batch);

  // The backend has made `key` durable: later checks find it through
  // Lookups::key_exists.
  void key_committed(const std::string& key) { keys_in_flight_.erase(key); }

 private:
  Result<void> check_indexes(std::span<AppendEntry> batch,
                             const Lookups& lookups);

  std::uint64_t last_log_sequence_;
  StringMap<std::uint64_t> last_channel_sequence_;
  std::unordered_set<std::string> keys_in_flight_;
};

}  // namespace parley::log
