#include "engine/transport/outgoing_frame.h"

#include <utility>

#include "engine/transport/frame_codec.h"

namespace parley::transport {

OutgoingFrame OutgoingFrame::notify(
    std::shared_ptr<const engine::Envelope> envelope,
    std::string recipient_id) {
  OutgoingFrame frame;
  frame.charge_ = notify_size_estimate(*envelope);
  frame.envelope_ = std::move(envelope);
  frame.recipient_id_ = std::move(recipient_id);
  return frame;
}

std::string OutgoingFrame::take() && {
  if (envelope_) {
    frame_ = encode_notify(*envelope_, recipient_id_);
    envelope_.reset();
  }
  return std::move(frame_);
}

}  // namespace parley::transport
