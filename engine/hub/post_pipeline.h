// The post pipeline: AG2's checks in AG2's order (the sender, an
// idempotent retry, the sender's rules and rate, the channel and its
// state, participation, the adapter, inbox capacity, the adapter's own
// validation), then the staged envelope and what it causes (the channel
// opening, closing). Each post is a change run by the Committer; its stage
// function runs under the writer lock.
//
// Idempotent posts: a non-empty idempotency_key is indexed per (channel,
// sender, key) in the same batch as the envelope; a retry with the same
// payload returns the original's id and writes nothing, another payload is
// a conflict. Keys of posts staged but not yet durable are kept in memory
// so that a concurrent retry finds them.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/hub/channel_lifecycle.h"
#include "engine/hub/commit.h"
#include "engine/hub/delivery.h"
#include "engine/hub/hub_core.h"
#include "engine/hub/rate_limiter.h"
#include "engine/hub/state_reads.h"
#include "engine/hub/task_mutations.h"
#include "log/mutex.h"
#include "log/thread_annotations.h"

namespace parley::engine {

class PostPipeline {
 public:
  PostPipeline(HubCore& core, const StateReads& reads, Delivery& delivery,
               const ChannelLifecycle& channels, const TaskMutations& tasks)
      : core_(core),
        reads_(reads),
        delivery_(delivery),
        channels_(channels),
        tasks_(tasks) {}

  // The post of `envelope` (the caller's, left as it was passed when the
  // post is refused before it is staged); the minted envelope id. A
  // ChangeLike whose functions have types of their own, so the request that
  // runs it holds them in place.
  struct Post {
    struct Stage {
      PostPipeline* pipeline;
      std::shared_ptr<Envelope> envelope;
      // Called as a change's stage function: the writer lock is held.
      Result<std::string> operator()(Commit& batch) const;
    };
    struct Settle {
      PostPipeline* pipeline;
      void operator()(const Commit& batch, const Result<std::string>& posted,
                      bool sequenced) const;
    };
    Stage stage;
    Settle settle;
  };
  Post post(std::shared_ptr<Envelope> envelope) {
    return {{this, std::move(envelope)}, {this}};
  }

  // An unregistered sender's rate bucket goes.
  void forget_sender(std::string_view agent_id) {
    rate_limiter_.forget(agent_id);
  }

 private:
  // Stamps `*posted` and stages it (shared, not copied).
  Result<std::string> stage(const std::shared_ptr<Envelope>& posted,
                            Commit& batch) REQUIRES(core_.writer);
  // Whether posting `envelope` spends a token of its sender's rate limit.
  static bool is_rate_limited(const Envelope& envelope);
  // The id of the post `retry` repeats under index key `key`, nullopt for a
  // new key, or kConflict when the key was used with another payload.
  Result<std::optional<std::string>> idempotent_original(
      std::string_view key, const Envelope& retry) const;
  // Indexes the batch's first staged envelope under `key` and remembers it
  // until forget_in_flight(batch).
  void stage_idempotency_key(Commit& batch, std::string key);
  void forget_in_flight(const Commit& batch);

  HubCore& core_;
  const StateReads& reads_;
  Delivery& delivery_;
  const ChannelLifecycle& channels_;
  const TaskMutations& tasks_;
  RateLimiter rate_limiter_;
  mutable log::Mutex idempotency_mutex_;
  // Index key -> staged post whose batch is not durable yet.
  std::map<std::string, std::shared_ptr<const Envelope>, std::less<>>
      idempotency_in_flight_ GUARDED_BY(idempotency_mutex_);
};

}  // namespace parley::engine
