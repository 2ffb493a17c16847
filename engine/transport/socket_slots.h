// The server's budget of client sockets. Each accepted connection holds a
// slot from accept until its socket is closed; at the limit the listener
// closes a new connection at once instead of serving it. Every socket is a
// file descriptor, and so is every file of the log: without a budget a
// flood of connections could take the descriptors the log needs to open
// its next file, and a failed log write stops the hub.
//
// Thread safety: every member is safe from any thread. The SocketSlots
// outlives every Slot taken from it (the server owns it).
#pragma once

#include <atomic>
#include <cstddef>
#include <optional>

namespace parley::transport {

class SocketSlots {
 public:
  // One slot taken: given back by release() or, at the latest, by the
  // destructor. Move-only.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : taken_(other.taken_) {
      other.taken_ = nullptr;
    }
    Slot& operator=(Slot&& other) noexcept {
      if (this != &other) {
        release();
        taken_ = other.taken_;
        other.taken_ = nullptr;
      }
      return *this;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { release(); }

    // Gives the slot back; later calls do nothing.
    void release() {
      if (taken_ != nullptr) taken_->fetch_sub(1, std::memory_order_relaxed);
      taken_ = nullptr;
    }

   private:
    friend class SocketSlots;
    explicit Slot(std::atomic<std::size_t>& taken) : taken_(&taken) {}
    std::atomic<std::size_t>* taken_;
  };

  // `limit` >= 1: the most slots held at once.
  explicit SocketSlots(std::size_t limit) : limit_(limit) {}
  SocketSlots(const SocketSlots&) = delete;
  SocketSlots& operator=(const SocketSlots&) = delete;

  // A slot, or nullopt when `limit` are held.
  std::optional<Slot> try_take() {
    std::size_t held = taken_.load(std::memory_order_relaxed);
    do {
      if (held >= limit_) return std::nullopt;
    } while (!taken_.compare_exchange_weak(held, held + 1,
                                           std::memory_order_relaxed));
    return Slot(taken_);
  }

  std::size_t limit() const { return limit_; }

 private:
  const std::size_t limit_;
  std::atomic<std::size_t> taken_ = 0;
};

}  // namespace parley::transport
