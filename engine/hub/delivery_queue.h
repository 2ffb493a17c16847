// A pull-style inbox for one agent: what AG2's HumanClient and custom
// handlers read from. Hub::subscribe_queue feeds it; any thread may pop.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "engine/base/envelope.h"

namespace parley::engine {

// Receives the envelopes delivered to one agent. Called on the thread that
// published the change, outside every hub lock, possibly from several
// threads at once.
using DeliveryCallback =
    std::function<void(const std::string& recipient_id, const Envelope&)>;

class DeliveryQueue {
 public:
  void push(const Envelope& envelope) {
    {
      std::lock_guard lock(mutex_);
      envelopes_.push_back(envelope);
    }
    ready_.notify_one();
  }

  // The oldest undelivered envelope, waiting up to `timeout` for one.
  std::optional<Envelope> pop(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (!ready_.wait_for(lock, timeout, [&] { return !envelopes_.empty(); })) {
      return std::nullopt;
    }
    Envelope next = std::move(envelopes_.front());
    envelopes_.pop_front();
    return next;
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return envelopes_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Envelope> envelopes_;
};

}  // namespace parley::engine
