#include "engine/transport/frame_codec.h"

#include <algorithm>
#include <initializer_list>

#include "engine/base/input_limits.h"
#include "engine/json/python_json.h"

namespace parley::transport {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The fields of one client frame kind, and which must be present.
struct FrameFields {
  std::initializer_list<std::string_view> all;
  std::initializer_list<std::string_view> required;
};

// The first key of `frame` (besides "kind") not in `fields`, or a missing
// required key, as a reason to skip the frame.
std::optional<std::string> shape_problem(const json& frame,
                                         std::string_view kind,
                                         const FrameFields& fields) {
  for (const auto& [key, value] : frame.items()) {
    if (key == "kind") continue;
    if (std::ranges::find(fields.all, key) == fields.all.end()) {
      return std::string(kind) + " frame has unexpected key '" + key + "'";
    }
  }
  for (std::string_view key : fields.required) {
    if (!frame.contains(key)) {
      return std::string(kind) + " frame is missing required key '" +
             std::string(key) + "'";
    }
  }
  return std::nullopt;
}

MalformedFrame malformed(std::string_view kind, std::string_view field) {
  return {"malformed " + std::string(kind) + " frame: " + std::string(field)};
}

// Reads string field `key` into `out` (absent: left as is). False when the
// value is not a string.
bool read_string(const json& frame, std::string_view key, std::string& out) {
  auto it = frame.find(key);
  if (it == frame.end()) return true;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

InboundFrame decode_hello(const json& frame) {
  if (auto problem = shape_problem(
          frame, "hello",
          {{"name", "auth_scheme", "auth_claim", "since_envelope_id"},
           {"name"}})) {
    return SkippedFrame{*problem};
  }
  HelloFrame hello;
  if (!read_string(frame, "name", hello.name))
    return malformed("hello", "name");
  if (!read_string(frame, "auth_scheme", hello.auth_scheme)) {
    return malformed("hello", "auth_scheme");
  }
  if (auto it = frame.find("since_envelope_id"); it != frame.end()) {
    if (it->is_string()) {
      hello.since_envelope_id = it->get<std::string>();
    } else if (!it->is_null()) {
      return malformed("hello", "since_envelope_id");
    }
  }
  if (auto it = frame.find("auth_claim"); it != frame.end()) {
    hello.auth_claim = it->dump();
  }
  return hello;
}

InboundFrame decode_request(json& frame) {
  if (auto problem = shape_problem(
          frame, "request",
          {{"request_id", "op", "params"}, {"request_id", "op"}})) {
    return SkippedFrame{*problem};
  }
  RequestFrame request;
  if (!read_string(frame, "request_id", request.request_id)) {
    return malformed("request", "request_id");
  }
  if (!read_string(frame, "op", request.op)) return malformed("request", "op");
  if (auto it = frame.find("params"); it != frame.end()) {
    if (!it->is_object()) return malformed("request", "params");
    request.params = std::move(*it);
  }
  return request;
}

InboundFrame decode_receipt(const json& frame) {
  if (auto problem = shape_problem(
          frame, "receipt",
          {{"envelope_id", "status", "recipient_id", "channel_id", "reason"},
           {"envelope_id", "status"}})) {
    return SkippedFrame{*problem};
  }
  ReceiptFrame receipt;
  const std::pair<std::string_view, std::string*> fields[] = {
      {"envelope_id", &receipt.envelope_id},
      {"status", &receipt.status},
      {"recipient_id", &receipt.recipient_id},
      {"channel_id", &receipt.channel_id},
      {"reason", &receipt.reason}};
  for (const auto& [key, out] : fields) {
    if (!read_string(frame, key, *out)) return malformed("receipt", key);
  }
  return receipt;
}

InboundFrame decode_bare(const json& frame, std::string_view kind,
                         InboundFrame decoded) {
  if (auto problem = shape_problem(frame, kind, {{}, {}})) {
    return SkippedFrame{*problem};
  }
  return decoded;
}

std::string dump(const ordered_json& frame) {
  return engine::dump_python(frame);
}

}  // namespace

InboundFrame decode_frame(std::string_view text) {
  // Bounded before anything recurses into it: a frame nested thousands of
  // levels deep would overflow the stack of whatever walks it next.
  if (engine::json_depth(text) > engine::kMaxJsonDepth) {
    return SkippedFrame{"nests deeper than " +
                        std::to_string(engine::kMaxJsonDepth) + " levels"};
  }
  json frame = json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (frame.is_discarded()) return SkippedFrame{"not valid JSON"};
  if (!frame.is_object()) return SkippedFrame{"not a JSON object"};
  auto kind_it = frame.find("kind");
  if (kind_it == frame.end() || !kind_it->is_string()) {
    return SkippedFrame{"no string 'kind'"};
  }
  const std::string kind = kind_it->get<std::string>();
  if (kind == "request") return decode_request(frame);
  if (kind == "receipt") return decode_receipt(frame);
  if (kind == "hello") return decode_hello(frame);
  if (kind == "ping") return decode_bare(frame, kind, PingFrame{});
  if (kind == "pong") return decode_bare(frame, kind, PongFrame{});
  if (kind == "welcome" || kind == "response" || kind == "error" ||
      kind == "notify") {
    return SkippedFrame{"a " + kind + " frame is sent by the hub, not to it"};
  }
  return SkippedFrame{"unknown kind '" + kind + "'"};
}

std::string encode_welcome(std::string_view endpoint_id,
                           std::string_view hub_time) {
  ordered_json frame = ordered_json::object();
  frame["endpoint_id"] = endpoint_id;
  frame["hub_time"] = hub_time;
  frame["kind"] = "welcome";
  return dump(frame);
}

std::string encode_response(std::string_view request_id,
                            const ordered_json& result) {
  ordered_json frame = ordered_json::object();
  frame["request_id"] = request_id;
  frame["ok"] = true;
  frame["result"] = result;
  frame["error_code"] = "";
  frame["error_message"] = "";
  frame["kind"] = "response";
  return dump(frame);
}

namespace {

constexpr std::string_view kStringResponseOpen = R"({"request_id": )";
constexpr std::string_view kStringResponseMiddle =
    R"(, "ok": true, "result": )";
constexpr std::string_view kStringResponseClose =
    R"(, "error_code": "", "error_message": "", "kind": "response"})";

}  // namespace

std::string encode_string_response(std::string_view request_id,
                                   std::string_view result) {
  std::string frame;
  frame.reserve(string_response_size_estimate(request_id, result));
  frame += kStringResponseOpen;
  engine::append_python_string(request_id, frame);
  frame += kStringResponseMiddle;
  engine::append_python_string(result, frame);
  frame += kStringResponseClose;
  return frame;
}

std::size_t string_response_size_estimate(std::string_view request_id,
                                          std::string_view result) {
  // Each string between two quotes.
  return kStringResponseOpen.size() + kStringResponseMiddle.size() +
         kStringResponseClose.size() + request_id.size() + result.size() + 4;
}

std::string encode_failure(std::string_view request_id,
                           std::string_view error_code,
                           std::string_view error_message) {
  ordered_json frame = ordered_json::object();
  frame["request_id"] = request_id;
  frame["ok"] = false;
  frame["result"] = nullptr;
  frame["error_code"] = error_code;
  frame["error_message"] = error_message;
  frame["kind"] = "response";
  return dump(frame);
}

std::string encode_error(std::string_view code, std::string_view message,
                         std::optional<std::string_view> envelope_id) {
  ordered_json frame = ordered_json::object();
  frame["code"] = code;
  frame["message"] = message;
  frame["envelope_id"] =
      envelope_id ? ordered_json(*envelope_id) : ordered_json(nullptr);
  frame["kind"] = "error";
  return dump(frame);
}

std::string encode_notify(const engine::Envelope& envelope,
                          std::string_view recipient_id) {
  // {"envelope": ..., "recipient_id": ..., "kind": "notify"}, written
  // directly: this frame is the server's hottest.
  std::string frame = R"({"envelope": )";
  frame.reserve(notify_size_estimate(envelope));
  engine::append_python(envelope, frame);
  frame += R"(, "recipient_id": )";
  engine::append_python_string(recipient_id, frame);
  frame += R"(, "kind": "notify"})";
  return frame;
}

std::size_t notify_size_estimate(const engine::Envelope& envelope) {
  // The fixed fields and keys come to about 400 bytes; the event data's
  // JSON is about as long as its FlexBuffer.
  return 512 + envelope.event_data.size();
}

std::string encode_pong() { return R"({"kind": "pong"})"; }

}  // namespace parley::transport
