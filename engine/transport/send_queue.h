// A connection's bounded queue of frames waiting to be written (a notify
// may wait unencoded: see OutgoingFrame).
//
// Producers (request completions, deliveries on posting threads, the
// connection's own strand) push; exactly one writer (the connection's
// strand) pops, taking what is queued a write at a time. push() tells its
// caller when the writer is idle and must be started; the writer goes idle
// when pop() finds the queue empty. Memory is
// bounded: a push that would exceed either limit (bytes as each frame's
// charge()) is refused with kOverflow and nothing is queued; the connection
// is then closed. Queues may also share a SendQueueTotal: over its limit a
// queue that holds frames already (its client is behind) refuses the same
// way, while one that is empty (its client keeps up) still takes a frame.
//
// Thread safety: every member is safe from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "engine/transport/outgoing_frame.h"

namespace parley::transport {

struct SendQueueLimits {
  std::size_t max_frames = 16384;
  std::size_t max_bytes = 32 << 20;
};

// The bytes queued in every queue that shares it, against one limit. It
// outlives those queues.
struct SendQueueTotal {
  explicit SendQueueTotal(std::size_t limit) : limit(limit) {}
  const std::size_t limit;
  std::atomic<std::size_t> bytes = 0;
};

class SendQueue {
 public:
  enum class Push {
    kQueued,       // the writer is running and will take it
    kStartWriter,  // queued; the caller must start the writer
    kOverflow,     // refused: a limit would be exceeded
    kClosed,       // refused: the queue was closed
  };

  // `total`, if any, outlives the queue.
  explicit SendQueue(SendQueueLimits limits, SendQueueTotal* total = nullptr)
      : limits_(limits), total_(total) {}
  SendQueue(const SendQueue&) = delete;
  SendQueue& operator=(const SendQueue&) = delete;

  Push push(OutgoingFrame frame);

  // Moves the oldest queued frames to the end of `out` until their charges
  // reach `max_bytes` (at least one frame), and returns how many. None when
  // the queue is empty (or closed): the writer is then idle until a push
  // returns kStartWriter.
  std::size_t pop(std::size_t max_bytes, std::vector<OutgoingFrame>& out);

  // Drops every queued frame; later pushes return kClosed.
  void close();

  // True when at most `frames` frames and `bytes` bytes are queued.
  // Otherwise false, and `resume` runs once the writer has taken enough
  // (on the writer's thread, from pop(), no lock held); it replaces an
  // earlier one still waiting, and is dropped by close().
  bool when_below(std::size_t frames, std::size_t bytes,
                  std::function<void()> resume);

  std::size_t frames() const;
  std::size_t bytes() const;
  bool idle() const;  // empty and no write in progress
  const SendQueueLimits& limits() const { return limits_; }

 private:
  // Move bytes_ and the shared total together. Locked.
  void add_bytes(std::size_t bytes);
  void remove_bytes(std::size_t bytes);

  const SendQueueLimits limits_;
  SendQueueTotal* const total_;
  // Below these, pop() runs resume_.
  struct Waiter {
    std::size_t frames = 0;
    std::size_t bytes = 0;
    std::function<void()> resume;
  };

  mutable std::mutex mutex_;
  Waiter waiter_;  // empty resume: nobody waits
  std::deque<OutgoingFrame> frames_;
  std::size_t bytes_ = 0;
  bool writing_ = false;
  bool closed_ = false;
};

}  // namespace parley::transport
