// Per-sender rate limit (LIM-13): a token bucket per sender, as AG2's Gen-1
// hub/_limits.py had it: capacity = max(1, effective burst) where the effective
// burst is limits.rate.burst, or limits.rate.per_minute when burst is 0; refill
// per_minute / 60 tokens a second, computed lazily from the hub clock at each
// attempt; a new bucket starts full; a post needs one whole token. The bucket
// is rebuilt (full) when the sender's (per_minute, burst) changes and dropped
// when per_minute is 0 (the limit is off).
//
// In memory by nature: a restart gives every sender a full bucket.
//
// Thread safety: every member may be called from any thread (one mutex).
#pragma once

#include <string>
#include <string_view>

#include "engine/base/clock.h"
#include "engine/base/error.h"
#include "engine/registry/registry.h"
#include "log/mutex.h"
#include "log/string_map.h"
#include "log/thread_annotations.h"

namespace parley::engine {

class RateLimiter {
 public:
  // Refills `sender`'s bucket to `now` and refuses with access_denied
  // "sender '<name>' exceeded rate limit (<per_minute>/min, burst <b>)"
  // when it holds less than one token. Takes nothing: see consume().
  Result<void> check(const AgentRecord& sender, Timestamp now);
  // Takes one token from a bucket check() just passed with a limit on (a
  // sender without one has no bucket).
  void consume(std::string_view sender_id);
  // Gives back the token consume() took, for a post the log then refused.
  void refund(std::string_view sender_id);
  void forget(std::string_view sender_id);

 private:
  struct Bucket {
    std::int64_t per_minute = 0;
    std::int64_t burst = 0;
    double tokens = 0;
    Timestamp refilled;
  };

  log::Mutex mutex_;
  log::StringMap<Bucket> buckets_ GUARDED_BY(mutex_);
};

}  // namespace parley::engine
