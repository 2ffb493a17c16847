// The bytes of requests in flight across all of a server's connections
// (received, not yet answered), against one limit. A connection that finds
// the budget spent stops reading its socket and waits here; it is resumed
// once answers bring the total back below the limit. So the memory that
// requests hold is bounded for the whole server, whatever the number of
// connections, and a flood of large requests is held back by TCP.
//
// Thread safety: every member is safe from any thread. Waiters are called
// outside the budget's lock, on the thread whose release freed the budget.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <vector>

#include "log/mutex.h"
#include "log/thread_annotations.h"

namespace parley::transport {

class RequestBudget {
 public:
  // `limit` >= 1.
  explicit RequestBudget(std::size_t limit) : limit_(limit) {}
  RequestBudget(const RequestBudget&) = delete;
  RequestBudget& operator=(const RequestBudget&) = delete;

  void take(std::size_t bytes) { bytes_.fetch_add(bytes); }
  // Gives `bytes` back; when that leaves the total below the limit, calls
  // (and forgets) every waiter.
  void release(std::size_t bytes);
  // Whether the total has reached the limit.
  bool spent() const { return bytes_.load() >= limit_; }

  // Calls `resume` after a release that leaves the total below the limit.
  // A waiter must look at spent() again after waiting: the release it
  // waits for may have come first (spent() and this are sequentially
  // consistent with release(), so it cannot miss both).
  void wait(std::function<void()> resume) EXCLUDES(mutex_);

  std::size_t bytes() const { return bytes_.load(); }
  std::size_t limit() const { return limit_; }

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> bytes_ = 0;
  std::atomic<std::size_t> waiting_ = 0;  // waiters_.size()
  log::Mutex mutex_;
  std::vector<std::function<void()>> waiters_ GUARDED_BY(mutex_);
};

}  // namespace parley::transport
