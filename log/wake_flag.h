// A one-shot wake-up flag on a Linux futex: wait() sleeps until set() and
// never spins or yields, so a group commit's 32 waiters stay off the CPU
// while their leader writes, and set() wakes all of them with one syscall.
// (std::atomic::wait spins and yields first, which on 2 cores takes the
// CPU from the leader.)
#pragma once

#include <atomic>

namespace parley::log {

class WakeFlag {
 public:
  // Returns once set() has been called; everything written before set()
  // is visible after.
  void wait() const;
  // Sets the flag and wakes every waiter. A waiter may destroy the flag as
  // soon as its wait() returns, even while set() is still in its wake call:
  // FUTEX_WAKE on a private futex only hashes the address, never touches
  // it, and at worst wakes a later futex at that address spuriously, which
  // every futex waiter tolerates.
  void set();
  bool is_set() const { return word_.load(std::memory_order_acquire) != 0; }

 private:
  std::atomic<int> word_ = 0;
};

}  // namespace parley::log
