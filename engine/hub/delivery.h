// Who receives what: the subscribers bound to agents, their pending-inbox
// counters, the deliveries a folded batch plans and their publication once it
// is durable, and what a reconnecting agent missed.
//
// Thread safety: every member may be called from any thread; the
// subscriber table and counters are guarded by the part's own mutex, never
// held while a subscriber or listener runs.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cassert>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/hub/commit.h"
#include "engine/hub/delivery_queue.h"
#include "engine/hub/hub_core.h"
#include "log/mutex.h"
#include "log/string_map.h"
#include "log/thread_annotations.h"

namespace parley::engine {

class Delivery {
 public:
  explicit Delivery(HubCore& core) : core_(core) {}
  Delivery(const Delivery&) = delete;
  Delivery& operator=(const Delivery&) = delete;

  void subscribe(std::string_view agent_id, DeliveryCallback callback);
  std::shared_ptr<DeliveryQueue> subscribe_queue(std::string_view agent_id);
  void unsubscribe(std::string_view agent_id);
  // An unregistered agent: its subscription and counter are dropped.
  void forget(std::string_view agent_id);

  // Appends to `into` a delivery of `envelope` (staged at index `staged`
  // of its batch) to each of its recipients in a channel described by
  // `metadata`: its audience, or every participant but the sender; an
  // unknown id replaced by what the arbiter resolves it to, or dropped;
  // recipients the arbiter refuses skipped.
  void plan(const ChannelMetadata& metadata,
            const std::shared_ptr<const Envelope>& envelope, std::size_t staged,
            PlannedDeliveries& into) const REQUIRES_SHARED(core_.state_mutex);

  // Refuses a substantive post when a recipient's inbox is at its cap
  // (the arbiter's authorize_inbox).
  Result<void> check_inboxes(const ChannelMetadata& metadata,
                             const Envelope& envelope) const
      REQUIRES(core_.writer) EXCLUDES(mutex_);

  // For another hub part holding its own core's writer lock or state lock
  // (at least shared): every part shares one HubCore, so this one's is.
  void check_same_writer([[maybe_unused]] const HubCore& core) const
      REQUIRES(core.writer) ASSERT_CAPABILITY(core_.writer) {
    assert(&core == &core_);
  }
  void check_same_state([[maybe_unused]] const HubCore& core) const
      REQUIRES_SHARED(core.state_mutex)
          ASSERT_SHARED_CAPABILITY(core_.state_mutex) {
    assert(&core == &core_);
  }
  // Delivers a durable batch's envelopes and tells its listener events,
  // interleaved as Commit::StagedEvent::after says. A substantive delivery
  // to a bound recipient raises its pending count, and crossing the
  // high-water mark from below signals pressure; a batch that drains its
  // sender (Commit::drains_sender) first drops the sender's count by one,
  // never below 0.
  void publish(const Commit& batch);

  // Pending counts per agent, for health().
  std::map<std::string, std::int64_t, std::less<>> pending_inbox() const;

 private:
  // What publish() found for one delivery under the mutex: the bound
  // recipient's callback (none: offline) and the count that crossed its
  // high-water mark, if this delivery did.
  struct BoundDelivery {
    std::shared_ptr<const DeliveryCallback> callback;
    std::optional<std::int64_t> pressure;
  };
  using Bound = boost::container::small_vector<BoundDelivery, 1>;
  void deliver(const PlannedDelivery& delivery, const BoundDelivery& bound);

  HubCore& core_;
  mutable log::Mutex mutex_;
  // Shared, so that a delivery takes its callback out of the lock without
  // copying it.
  log::StringMap<std::shared_ptr<const DeliveryCallback>> subscribers_
      GUARDED_BY(mutex_);
  // Substantive deliveries not yet answered by a post.
  log::StringMap<std::int64_t> pending_inbox_ GUARDED_BY(mutex_);
};

}  // namespace parley::engine
