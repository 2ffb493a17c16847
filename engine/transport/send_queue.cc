#include "engine/transport/send_queue.h"

#include <utility>

namespace parley::transport {

SendQueue::Push SendQueue::push(OutgoingFrame frame) {
  std::lock_guard lock(mutex_);
  if (closed_) return Push::kClosed;
  const std::size_t charge = frame.charge();
  if (frames_.size() + 1 > limits_.max_frames ||
      bytes_ + charge > limits_.max_bytes) {
    return Push::kOverflow;
  }
  if (total_ != nullptr && !frames_.empty() &&
      total_->bytes.load(std::memory_order_relaxed) + charge > total_->limit) {
    return Push::kOverflow;
  }
  add_bytes(charge);
  frames_.push_back(std::move(frame));
  if (writing_) return Push::kQueued;
  writing_ = true;
  return Push::kStartWriter;
}

std::size_t SendQueue::pop(std::size_t max_bytes,
                           std::vector<OutgoingFrame>& out) {
  std::size_t taken = 0;
  std::function<void()> resume;
  {
    std::lock_guard lock(mutex_);
    if (frames_.empty() || closed_) {
      writing_ = false;
      return 0;
    }
    std::size_t charged = 0;
    while (!frames_.empty() && (taken == 0 || charged < max_bytes)) {
      charged += frames_.front().charge();
      out.push_back(std::move(frames_.front()));
      frames_.pop_front();
      ++taken;
    }
    remove_bytes(charged);
    if (waiter_.resume && frames_.size() <= waiter_.frames &&
        bytes_ <= waiter_.bytes) {
      resume = std::exchange(waiter_.resume, nullptr);
    }
  }
  if (resume) resume();
  return taken;
}

void SendQueue::close() {
  std::function<void()> resume;
  {
    std::lock_guard lock(mutex_);
    closed_ = true;
    frames_.clear();
    remove_bytes(bytes_);
    resume = std::exchange(waiter_.resume, nullptr);
  }
  // Destroyed outside the lock: it may own the last reference to its
  // connection.
  resume = nullptr;
}

bool SendQueue::when_below(std::size_t frames, std::size_t bytes,
                           std::function<void()> resume) {
  std::unique_lock lock(mutex_);
  if (closed_ || (frames_.size() <= frames && bytes_ <= bytes)) return true;
  std::swap(waiter_.resume, resume);
  waiter_.frames = frames;
  waiter_.bytes = bytes;
  lock.unlock();
  return false;  // `resume`, now the replaced waiter, dies unlocked
}

void SendQueue::add_bytes(std::size_t bytes) {
  bytes_ += bytes;
  if (total_ != nullptr) total_->bytes.fetch_add(bytes);
}

void SendQueue::remove_bytes(std::size_t bytes) {
  bytes_ -= bytes;
  if (total_ != nullptr) total_->bytes.fetch_sub(bytes);
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
