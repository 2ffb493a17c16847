// Copies a whole log from one store to another, whatever their backends,
// and checks the copy entry by entry.
#pragma once

#include <cstdint>
#include <functional>

#include "log/log_store.h"

namespace parley::log {

struct CopyReport {
  std::uint64_t records = 0;
  std::uint64_t channel_entries = 0;
  std::uint64_t idempotency_keys = 0;
};

// Called with the last log sequence copied so far.
using CopyProgress = std::function<void(std::uint64_t log_sequence)>;

// Appends every record of `from` to `to`, in order, with the channel and
// idempotency key its indexes give it, in batches of `batch_records`;
// every record keeps its log and channel sequence, so the bytes are the
// same. `to` must hold no record (kInvalidArgument otherwise, nothing
// written). Fails with kCorruption when `from`'s log or indexes are not
// dense and consistent (a record indexed twice, a gap), or with an error
// of either store; batches appended before a failure stay in `to`. Reads
// `from` while nobody appends to it (a copy of a live log misses what is
// appended meanwhile). Memory: 4 bytes per record, plus the channel ids
// and idempotency keys.
Result<CopyReport> copy_log(const LogStore& from, LogStore& to,
                            std::size_t batch_records = 1024,
                            const CopyProgress& progress = {});

// Whether `a` and `b` hold the same log: the same records byte for byte
// under the same sequences, the same channel index and the same
// idempotency index. kCorruption naming the first difference.
Result<void> compare_logs(const LogStore& a, const LogStore& b);

}  // namespace parley::log
