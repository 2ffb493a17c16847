// A std::mutex the thread-safety analysis knows (log/thread_annotations.h),
// and its scoped lock, which can also wait on a std::condition_variable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "log/thread_annotations.h"

namespace parley::log {

// Tells the CPU the thread is spinning (x86's pause), so that a spin-wait
// yields the core's resources to its sibling and leaves the loop sooner.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Takes `mutex`, trying a few times before sleeping on it, and returns it.
// The mutexes the hub's threads share are held for well under a
// microsecond, while a futex sleep and the holder's wake-up call cost
// microseconds each: spinning briefly lets a thread that finds the mutex
// held take it as it is released, without either thread entering the
// kernel.
inline std::mutex& lock_spinning(std::mutex& mutex) {
  constexpr int kTries = 256;
  for (int tried = 1; tried < kTries; ++tried) {
    if (mutex.try_lock()) return mutex;
    cpu_relax();
  }
  mutex.lock();
  return mutex;
}

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() ACQUIRE() { lock_spinning(mutex_); }
  void unlock() RELEASE() { mutex_.unlock(); }
  // For code the analysis cannot follow (a callback the holder runs):
  // states that the caller holds the mutex. Checks nothing at run time.
  void assert_held() const ASSERT_CAPABILITY(this) {}

 private:
  friend class MutexLock;
  std::mutex mutex_;
};

// Holds a Mutex from construction to destruction, except between unlock()
// and lock(). Not movable: the analysis tracks it by scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) ACQUIRE(mutex)
      : lock_(lock_spinning(mutex.mutex_), std::adopt_lock) {}
  ~MutexLock() RELEASE() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void unlock() RELEASE() { lock_.unlock(); }
  void lock() ACQUIRE() {
    lock_ = std::unique_lock(lock_spinning(*lock_.mutex()), std::adopt_lock);
  }

  // Waits on `cv` with the mutex released, and holds it again on return.
  // Wakes spuriously too: callers loop on their condition, which the
  // analysis then checks with the mutex held.
  void wait(std::condition_variable& cv) { cv.wait(lock_); }
  template <typename Clock, typename Duration>
  std::cv_status wait_until(
      std::condition_variable& cv,
      const std::chrono::time_point<Clock, Duration>& deadline) {
    return cv.wait_until(lock_, deadline);
  }
  template <typename Rep, typename Period>
  std::cv_status wait_for(std::condition_variable& cv,
                          const std::chrono::duration<Rep, Period>& timeout) {
    return cv.wait_for(lock_, timeout);
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace parley::log
