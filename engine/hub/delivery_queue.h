// A pull-style inbox for one agent: what AG2's HumanClient and custom
// handlers read from. Hub::subscribe_queue feeds it; any thread may pop.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "engine/base/envelope.h"
#include "log/mutex.h"
#include "log/thread_annotations.h"

namespace parley::engine {

// Receives the envelopes delivered to one agent. Called on the thread that
// published the change, outside every hub lock, possibly from several
// threads at once; it should return quickly, so slow work (encoding a
// frame, copying) belongs on the subscriber's own thread. The envelope is
// immutable and shared by every recipient: keep the pointer to use it
// later without copying it.
using DeliveryCallback =
    std::function<void(const std::string& recipient_id,
                       const std::shared_ptr<const Envelope>& envelope)>;

class DeliveryQueue {
 public:
  void push(const Envelope& envelope) {
    {
      log::MutexLock lock(mutex_);
      envelopes_.push_back(envelope);
    }
    ready_.notify_one();
  }

  // The oldest undelivered envelope, waiting up to `timeout` for one.
  std::optional<Envelope> pop(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    log::MutexLock lock(mutex_);
    while (envelopes_.empty()) {
      if (lock.wait_until(ready_, deadline) == std::cv_status::timeout &&
          envelopes_.empty()) {
        return std::nullopt;
      }
    }
    Envelope next = std::move(envelopes_.front());
    envelopes_.pop_front();
    return next;
  }

  std::size_t size() const {
    log::MutexLock lock(mutex_);
    return envelopes_.size();
  }

 private:
  mutable log::Mutex mutex_;
  std::condition_variable ready_;  // on mutex_: envelopes_ grew
  std::deque<Envelope> envelopes_ GUARDED_BY(mutex_);
};

}  // namespace parley::engine
