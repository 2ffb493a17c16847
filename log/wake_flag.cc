#include "log/wake_flag.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace parley::log {

static_assert(sizeof(std::atomic<int>) == sizeof(int) &&
              std::atomic<int>::is_always_lock_free);

namespace {

long futex(const std::atomic<int>& word, int op, int value) {
  return syscall(SYS_futex, reinterpret_cast<const int*>(&word), op, value,
                 nullptr, nullptr, 0);
}

}  // namespace

void WakeFlag::wait() const {
  // FUTEX_WAIT returns at once if the word is no longer 0, and may wake
  // spuriously: re-check.
  while (!is_set()) futex(word_, FUTEX_WAIT_PRIVATE, 0);
}

void WakeFlag::set() {
  word_.store(1, std::memory_order_release);
  futex(word_, FUTEX_WAKE_PRIVATE, INT_MAX);
}

}  // namespace parley::log
