// fuzz_frames: one WebSocket text message, as `parley serve` receives it,
// through transport::decode_frame, and the frames the server answers with.
//
// Asserts: decoding never throws; a request's params are an object, and
// the request written back as a frame decodes to the same request; a
// hello's auth_claim is JSON text; a malformed frame's message names the
// frame kind; every frame the server would send in reply (the error for a
// malformed frame, a failure and a response echoing the request's params,
// a pong) is one line of JSON, and the echoed params come back equal; and
// a frame the hot path (transport::decode_hot_frame) takes, the slow path
// reads the same.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "engine/transport/frame_codec.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/hot_frame_reference.h"

namespace {

using nlohmann::json;

// One frame the server sends: a single line holding one JSON object.
json sent_frame(const std::string& frame) {
  FUZZ_CHECK(frame.find('\n') == std::string::npos,
             "a reply frame spans lines: " + frame);
  json value = json::parse(frame, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(value.is_object(), "a reply frame is not a JSON object: " + frame);
  return value;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace parley::transport;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto hot = decode_hot_frame(text)) {
    auto slow = parley::testing::slow_hot_frame(text);
    FUZZ_CHECK(slow.has_value(),
               "the hot path took a frame the slow path refuses");
    const std::string difference =
        parley::testing::hot_frame_difference(*hot, *slow);
    FUZZ_CHECK(difference.empty(),
               "the hot path reads " + difference + " differently");
  }
  InboundFrame frame = decode_frame(text);
  if (auto* request = std::get_if<RequestFrame>(&frame)) {
    FUZZ_CHECK(request->params.is_object(), "request params not an object");
    const json written = {{"request_id", request->request_id},
                          {"op", request->op},
                          {"params", request->params},
                          {"kind", "request"}};
    InboundFrame again = decode_frame(written.dump());
    auto* same = std::get_if<RequestFrame>(&again);
    FUZZ_CHECK(same && same->request_id == request->request_id &&
                   same->op == request->op && same->params == request->params,
               "a request written back decodes differently: " + written.dump());
    sent_frame(encode_failure(request->request_id, "error", request->op));
    const json response = sent_frame(encode_response(
        request->request_id, nlohmann::ordered_json(request->params)));
    FUZZ_CHECK(response.at("result") == request->params,
               "the echoed params differ: " + response.dump());
  } else if (auto* hello = std::get_if<HelloFrame>(&frame)) {
    FUZZ_CHECK(json::accept(hello->auth_claim),
               "auth_claim is not JSON: " + hello->auth_claim);
    sent_frame(encode_welcome(hello->name, "2026-01-01T00:00:00+00:00"));
  } else if (auto* receipt = std::get_if<ReceiptFrame>(&frame)) {
    sent_frame(encode_error("not_found", receipt->reason,
                            std::string_view(receipt->envelope_id)));
  } else if (auto* malformed = std::get_if<MalformedFrame>(&frame)) {
    FUZZ_CHECK(malformed->message.starts_with("malformed "),
               "a malformed frame's message: " + malformed->message);
    sent_frame(encode_error("protocol_error", malformed->message));
  } else if (std::holds_alternative<PingFrame>(frame)) {
    sent_frame(encode_pong());
  } else if (auto* skipped = std::get_if<SkippedFrame>(&frame)) {
    FUZZ_CHECK(!skipped->why.empty(), "a frame skipped without a reason");
  }
  return 0;
}
