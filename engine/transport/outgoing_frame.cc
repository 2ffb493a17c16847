#include "engine/transport/outgoing_frame.h"

#include <utility>

#include "engine/transport/frame_codec.h"

namespace parley::transport {

OutgoingFrame OutgoingFrame::notify(
    std::shared_ptr<const engine::Envelope> envelope,
    std::string recipient_id) {
  OutgoingFrame frame;
  frame.deferred_ = Deferred::kNotify;
  frame.charge_ = notify_size_estimate(*envelope);
  frame.envelope_ = std::move(envelope);
  frame.id_ = std::move(recipient_id);
  return frame;
}

OutgoingFrame OutgoingFrame::string_response(std::string request_id,
                                             std::string result) {
  OutgoingFrame frame;
  frame.deferred_ = Deferred::kStringResponse;
  frame.charge_ = string_response_size_estimate(request_id, result);
  frame.id_ = std::move(request_id);
  frame.text_ = std::move(result);
  return frame;
}

std::string OutgoingFrame::take() && {
  switch (std::exchange(deferred_, Deferred::kNone)) {
    case Deferred::kNone:
      break;
    case Deferred::kNotify:
      text_ = encode_notify(*envelope_, id_);
      envelope_.reset();
      break;
    case Deferred::kStringResponse:
      text_ = encode_string_response(id_, text_);
      break;
  }
  return std::move(text_);
}

}  // namespace parley::transport
