// One frame waiting in a connection's send queue: encoded already, or a
// notify that the connection's writer encodes when it takes it. Deferring
// the notify keeps its encoding off the thread that published the delivery
// (the hub's committer, one thread for every connection) and on the
// recipient's strand.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "engine/base/envelope.h"

namespace parley::transport {

class OutgoingFrame {
 public:
  // An encoded frame (implicit: every encode_* result is one).
  OutgoingFrame(std::string frame)  // NOLINT(google-explicit-constructor)
      : frame_(std::move(frame)), charge_(frame_.size()) {}
  // A notify of `envelope` to `recipient_id`, encoded by take().
  static OutgoingFrame notify(std::shared_ptr<const engine::Envelope> envelope,
                              std::string recipient_id);

  // The bytes it counts against the send queue's limit: the frame's size,
  // or for a notify not yet encoded an estimate of it (it holds the
  // envelope, about as large). Fixed for the frame's life.
  std::size_t charge() const { return charge_; }

  // The frame's text, encoding a notify now. Once.
  std::string take() &&;

 private:
  OutgoingFrame() = default;

  std::string frame_;
  // A notify not yet encoded: what frame_ will be.
  std::shared_ptr<const engine::Envelope> envelope_;
  std::string recipient_id_;
  std::size_t charge_ = 0;
};

}  // namespace parley::transport
