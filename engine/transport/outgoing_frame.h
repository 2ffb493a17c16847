// One frame waiting in a connection's send queue: encoded already, or a
// notify or a post's response that the connection's writer encodes when it
// takes it. Deferring them keeps their encoding off the thread that
// completes the post and publishes its delivery (the hub's log thread, one
// thread for every connection) and on the connection's strand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "engine/base/envelope.h"

namespace parley::transport {

class OutgoingFrame {
 public:
  // An encoded frame (implicit: every encode_* result is one).
  OutgoingFrame(std::string frame)  // NOLINT(google-explicit-constructor)
      : text_(std::move(frame)), charge_(text_.size()) {}
  // A notify of `envelope` to `recipient_id`, encoded by take().
  static OutgoingFrame notify(std::shared_ptr<const engine::Envelope> envelope,
                              std::string recipient_id);
  // The successful response to `request_id` whose result is the string
  // `result`, encoded by take().
  static OutgoingFrame string_response(std::string request_id,
                                       std::string result);

  // The bytes it counts against the send queue's limit: the frame's size,
  // or for a frame not yet encoded an estimate of it (a notify holds the
  // envelope, about as large). Fixed for the frame's life.
  std::size_t charge() const { return charge_; }

  // The frame's text, encoding a deferred one now. Once.
  std::string take() &&;

 private:
  OutgoingFrame() = default;

  enum class Deferred : std::uint8_t { kNone, kNotify, kStringResponse };

  Deferred deferred_ = Deferred::kNone;
  // kNone: the frame; kStringResponse: the result.
  std::string text_;
  // kNotify: the recipient's id; kStringResponse: the request's.
  std::string id_;
  std::shared_ptr<const engine::Envelope> envelope_;  // kNotify
  std::size_t charge_ = 0;
};

}  // namespace parley::transport
