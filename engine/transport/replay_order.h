// Keeps a hello's replay and the live notifies racing it in each channel's
// order, once each, on one connection.
//
// A hello binds its agent, then reads from the log what the agent has not
// acked. A delivery published in between can be both live and in the
// replay, and a live notify queued before the replay would overtake the
// replayed envelopes of its channel. So while a replay to an agent is being
// queued, its live notifies are held; once it is queued they follow, in
// publication order. A live notify of an envelope the replay carried is
// dropped: its id is at or below the highest id the replay sent in its
// channel (a channel's envelope ids rise with its log order, and the hub
// publishes a channel's envelopes in that order). That floor is forgotten
// at the first live notify above it.
//
// Thread safety: any thread. `send` runs under the object's mutex, so what
// one call sends is queued before what any later call sends.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/transport/send_queue.h"
#include "log/mutex.h"
#include "log/thread_annotations.h"

namespace parley::transport {

class ReplayOrder {
 public:
  using EnvelopePtr = std::shared_ptr<const engine::Envelope>;

  enum class Live {
    kSent,       // passed to send
    kHeld,       // sent after the replay under way
    kDuplicate,  // the replay carried it
    kOverflow,   // refused: holding it would pass the send queue's limits
  };

  // Holds at most what the connection's send queue could.
  explicit ReplayOrder(SendQueueLimits limits) : limits_(limits) {}
  ReplayOrder(const ReplayOrder&) = delete;
  ReplayOrder& operator=(const ReplayOrder&) = delete;

  // A replay to `agent_id` is about to be read and queued: called before
  // the hello binds the agent. Every begin() is followed by one end().
  void begin(std::string_view agent_id);

  // A live notify of `envelope` to `recipient_id`: sent (send(envelope)),
  // held, dropped as a duplicate, or refused.
  template <typename Send>
  Live live(const EnvelopePtr& envelope, const std::string& recipient_id,
            Send&& send) {
    if (tracked_.load(std::memory_order_acquire) == 0) {
      send(envelope);
      return Live::kSent;
    }
    log::MutexLock lock(mutex_);
    const Live verdict = classify(envelope, recipient_id);
    if (verdict == Live::kSent) send(envelope);
    return verdict;
  }

  // The replay begun for `agent_id` is queued, having sent `replayed`
  // (empty if it failed). When no other replay to the agent is under way,
  // the held notifies it did not carry go to send, in order.
  template <typename Send>
  void end(std::string_view agent_id,
           std::span<const engine::Envelope> replayed, Send&& send) {
    log::MutexLock lock(mutex_);
    auto it = agents_.find(agent_id);
    if (it == agents_.end()) return;
    for (const EnvelopePtr& envelope : finish(it->second, replayed)) {
      send(envelope);
    }
    // Only now may live() skip the mutex: a live notify that did so
    // earlier would overtake the held ones just sent.
    forget_if_done(it);
  }

 private:
  struct Agent {
    int replays = 0;  // begun and not ended
    std::vector<EnvelopePtr> held;
    std::size_t held_bytes = 0;
    // channel id -> the highest envelope id a replay sent there
    std::map<std::string, std::string, std::less<>> floors;
  };

  Live classify(const EnvelopePtr& envelope, const std::string& recipient_id)
      REQUIRES(mutex_);
  // Ends one of `agent`'s replays; what is then to be sent, in order.
  std::vector<EnvelopePtr> finish(Agent& agent,
                                  std::span<const engine::Envelope> replayed)
      REQUIRES(mutex_);
  // False for an envelope at or below its channel's floor; one above it
  // lifts the floor.
  static bool above_floor(Agent& agent, const engine::Envelope& envelope);
  void forget_if_done(std::map<std::string, Agent, std::less<>>::iterator it)
      REQUIRES(mutex_);

  const SendQueueLimits limits_;
  log::Mutex mutex_;
  std::map<std::string, Agent, std::less<>> agents_ GUARDED_BY(mutex_);
  // agents_.size(): while 0, live() takes no lock.
  std::atomic<std::size_t> tracked_ = 0;
};

}  // namespace parley::transport
