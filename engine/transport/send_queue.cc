#include "engine/transport/send_queue.h"

namespace parley::transport {

SendQueue::Push SendQueue::push(std::string frame) {
  std::lock_guard lock(mutex_);
  if (closed_) return Push::kClosed;
  if (frames_.size() + 1 > limits_.max_frames ||
      bytes_ + frame.size() > limits_.max_bytes) {
    return Push::kOverflow;
  }
  bytes_ += frame.size();
  frames_.push_back(std::move(frame));
  if (writing_) return Push::kQueued;
  writing_ = true;
  return Push::kStartWriter;
}

std::optional<std::string> SendQueue::pop() {
  std::optional<std::string> next;
  {
    std::lock_guard lock(mutex_);
    if (frames_.empty() || closed_) {
      writing_ = false;
      return std::nullopt;
    }
    next = std::move(frames_.front());
    frames_.pop_front();
    bytes_ -= next->size();
  }
  drained_.notify_all();
  return next;
}

void SendQueue::close() {
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    frames_.clear();
    bytes_ = 0;
  }
  drained_.notify_all();
}

bool SendQueue::wait_below(std::size_t frames, std::size_t bytes,
                           std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return drained_.wait_for(lock, timeout, [&] {
    return closed_ || (frames_.size() <= frames && bytes_ <= bytes);
  });
}

std::size_t SendQueue::frames() const {
  std::lock_guard lock(mutex_);
  return frames_.size();
}

std::size_t SendQueue::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

bool SendQueue::idle() const {
  std::lock_guard lock(mutex_);
  return frames_.empty() && !writing_;
}

}  // namespace parley::transport
