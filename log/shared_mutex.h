// A std::shared_mutex the thread-safety analysis knows
// (log/thread_annotations.h), with a scoped exclusive lock (which can wait
// on a std::condition_variable_any) and a scoped shared lock.
#pragma once

#include <chrono>
#include <condition_variable>
#include <shared_mutex>

#include "log/thread_annotations.h"

namespace parley::log {

class CAPABILITY("shared mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mutex_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mutex_.unlock_shared(); }
  // States that the caller holds the mutex (exclusively, or at least
  // shared), for code the analysis cannot follow. Checks nothing.
  void assert_held() const ASSERT_CAPABILITY(this) {}
  void assert_held_shared() const ASSERT_SHARED_CAPABILITY(this) {}

 private:
  friend class WriterLock;
  std::shared_mutex mutex_;
};

// Holds a SharedMutex exclusively for its scope.
class SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex& mutex) ACQUIRE(mutex)
      : lock_(mutex.mutex_) {}
  ~WriterLock() RELEASE() = default;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

  // Waits on `cv` with the mutex released, and holds it again on return;
  // may wake spuriously (callers loop on their condition).
  void wait(std::condition_variable_any& cv) { cv.wait(lock_); }
  template <typename Clock, typename Duration>
  std::cv_status wait_until(
      std::condition_variable_any& cv,
      const std::chrono::time_point<Clock, Duration>& deadline) {
    return cv.wait_until(lock_, deadline);
  }

 private:
  std::unique_lock<std::shared_mutex> lock_;
};

// Holds a SharedMutex shared for its scope.
class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mutex) ACQUIRE_SHARED(mutex)
      : mutex_(mutex) {
    mutex_.lock_shared();
  }
  ~ReaderLock() RELEASE() { mutex_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mutex_;
};

}  // namespace parley::log
