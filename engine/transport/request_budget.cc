#include "engine/transport/request_budget.h"

#include <utility>

namespace parley::transport {

// A waiter registers (waiting_, then its own look at spent()) and a release
// subtracts (bytes_, then its look at waiting_), each pair sequentially
// consistent: either the release sees the waiter, or the waiter's look at
// spent() sees the release.
void RequestBudget::release(std::size_t bytes) {
  const std::size_t left = bytes_.fetch_sub(bytes) - bytes;
  if (left >= limit_ || waiting_.load() == 0) return;
  std::vector<std::function<void()>> woken;
  {
    log::MutexLock lock(mutex_);
    woken.swap(waiters_);
    waiting_.store(0);
  }
  for (const auto& resume : woken) resume();
}

void RequestBudget::wait(std::function<void()> resume) {
  log::MutexLock lock(mutex_);
  waiters_.push_back(std::move(resume));
  waiting_.store(waiters_.size());
}

}  // namespace parley::transport
