// Clang's thread-safety annotations (-Wthread-safety), as macros that are
// no-ops for other compilers. The clang build (tools/check --tsan) checks
// them as errors: a member GUARDED_BY(m) is touched only with m held, a
// function REQUIRES(m) is called only with m held, one EXCLUDES(m) only
// without it. std::mutex is not annotated in libstdc++, so annotated code
// locks log::Mutex and log::SharedMutex (log/mutex.h, log/shared_mutex.h).
#pragma once

#if defined(__clang__)
#define PARLEY_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define PARLEY_THREAD_ANNOTATION(x)
#endif

// A type that is a lock ("mutex") or a scoped holder of one.
#define CAPABILITY(x) PARLEY_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY PARLEY_THREAD_ANNOTATION(scoped_lockable)

// Data: read with the lock held at least shared, written with it held.
#define GUARDED_BY(x) PARLEY_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) PARLEY_THREAD_ANNOTATION(pt_guarded_by(x))
// Lock order: this lock is taken before / after the ones named.
#define ACQUIRED_BEFORE(...) \
  PARLEY_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) \
  PARLEY_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))

// Functions: what the caller must hold, must not hold, or what the call
// takes, gives back, or tells the analysis is held.
#define REQUIRES(...) PARLEY_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) \
  PARLEY_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) PARLEY_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) PARLEY_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) \
  PARLEY_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) PARLEY_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) \
  PARLEY_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) \
  PARLEY_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) \
  PARLEY_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) PARLEY_THREAD_ANNOTATION(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) \
  PARLEY_THREAD_ANNOTATION(assert_shared_capability(x))
#define RETURN_CAPABILITY(x) PARLEY_THREAD_ANNOTATION(lock_returned(x))
// The function's body is not checked; its contract says why it is right.
#define NO_THREAD_SAFETY_ANALYSIS \
  PARLEY_THREAD_ANNOTATION(no_thread_safety_analysis)
