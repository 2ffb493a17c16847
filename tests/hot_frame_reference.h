// The slow path decode_hot_frame must agree with (engine/transport/
// hot_frames.h): decode_frame, then for a post_envelope request the op
// layer's own envelope parse. Shared by transport_hot_frames_test and the
// frames fuzzer.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "engine/base/envelope.h"
#include "engine/json/records_json.h"
#include "engine/transport/frame_codec.h"
#include "engine/transport/hot_frames.h"

namespace parley::testing {

// What the slow path makes of `text` when it is a receipt or a post the op
// layer would accept; nullopt otherwise.
inline std::optional<transport::HotFrame> slow_hot_frame(
    std::string_view text) {
  transport::InboundFrame frame = transport::decode_frame(text);
  if (auto* receipt = std::get_if<transport::ReceiptFrame>(&frame)) {
    return *receipt;
  }
  auto* request = std::get_if<transport::RequestFrame>(&frame);
  if (!request || request->op != "post_envelope" ||
      request->params.size() != 1 || !request->params.contains("envelope")) {
    return std::nullopt;
  }
  auto envelope = engine::envelope_from_json(request->params["envelope"]);
  if (!envelope) return std::nullopt;
  return transport::PostRequestFrame{
      request->request_id,
      std::make_shared<engine::Envelope>(std::move(*envelope))};
}

// Empty when `a` and `b` are the same frame; else the first field that
// differs.
inline std::string hot_frame_difference(const transport::HotFrame& a,
                                        const transport::HotFrame& b) {
  if (a.index() != b.index()) return "frame kind";
  if (auto* x = std::get_if<transport::ReceiptFrame>(&a)) {
    const auto& y = std::get<transport::ReceiptFrame>(b);
    if (x->envelope_id != y.envelope_id) return "envelope_id";
    if (x->status != y.status) return "status";
    if (x->recipient_id != y.recipient_id) return "recipient_id";
    if (x->channel_id != y.channel_id) return "channel_id";
    if (x->reason != y.reason) return "reason";
    return "";
  }
  const auto& x = std::get<transport::PostRequestFrame>(a);
  const auto& y = std::get<transport::PostRequestFrame>(b);
  const engine::Envelope& e = *x.envelope;
  const engine::Envelope& f = *y.envelope;
  if (x.request_id != y.request_id) return "request_id";
  if (e.channel_id != f.channel_id) return "channel_id";
  if (e.sender_id != f.sender_id) return "sender_id";
  if (e.audience != f.audience) return "audience";
  if (e.event_type != f.event_type) return "event_type";
  if (e.event_data != f.event_data) return "event_data";
  if (e.envelope_id != f.envelope_id) return "envelope_id";
  if (e.task_id != f.task_id) return "task_id";
  if (e.causation_id != f.causation_id) return "causation_id";
  if (e.trace_id != f.trace_id) return "trace_id";
  if (e.priority != f.priority) return "priority";
  if (e.depth != f.depth) return "depth";
  if (e.idempotency_key != f.idempotency_key) return "idempotency_key";
  if (e.created_at != f.created_at) return "created_at";
  if (e.ttl_seconds != f.ttl_seconds) return "ttl_seconds";
  if (e.sequence != f.sequence) return "sequence";
  return "";
}

}  // namespace parley::testing
