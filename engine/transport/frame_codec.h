// AG2's wire frames (one JSON object per WebSocket message): decoding what
// a client sends, encoding what the hub sends.
//
// Decoding is as strict as AG2's Python, which builds a frame by passing
// the JSON object's keys to the frame's constructor:
//   * not JSON, nested deeper than kMaxJsonDepth (engine/base/
//     input_limits.h), not an object, no string `kind`, an unknown `kind`,
//     a key the frame does not have, or a missing required key: the frame
//     is skipped (logged by the caller; the connection stays open);
//   * a hello, request or receipt whose field has the wrong JSON type:
//     answered with error{code:"protocol_error", message:"malformed <kind>
//     frame: <field>"}, the connection left open. Checked: hello `name`,
//     `auth_scheme` (strings), `since_envelope_id` (string or null);
//     request `request_id`, `op` (strings), `params` (object); receipt
//     `envelope_id`, `status`, `recipient_id`, `channel_id`, `reason`
//     (strings). A hello's `auth_claim` of another type is left to the
//     admission check (auth_failed).
//   * frames only the hub sends (welcome, response, error, notify) are
//     skipped when a client sends them.
//
// Encoding writes keys in AG2's order (fields in declaration order, `kind`
// last) with Python's json.dumps separators and escapes, so a frame is byte
// for byte what AG2's hub sends.
//
// Pure functions; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "engine/base/envelope.h"

namespace parley::transport {

struct HelloFrame {
  std::string name;
  std::string auth_scheme = "none";
  std::string auth_claim = "{}";  // compact JSON text, any JSON type
  std::optional<std::string> since_envelope_id;
};

struct RequestFrame {
  std::string request_id;
  std::string op;
  nlohmann::json params = nlohmann::json::object();
};

struct ReceiptFrame {
  std::string envelope_id;
  std::string status;
  std::string recipient_id;
  std::string channel_id;
  std::string reason;
};

struct PingFrame {};
struct PongFrame {};

// Skipped: `why` says what was wrong, for the log.
struct SkippedFrame {
  std::string why;
};

// Answered with error{protocol_error, message}.
struct MalformedFrame {
  std::string message;
};

using InboundFrame =
    std::variant<HelloFrame, RequestFrame, ReceiptFrame, PingFrame, PongFrame,
                 SkippedFrame, MalformedFrame>;

InboundFrame decode_frame(std::string_view text);

// {"endpoint_id", "hub_time", "kind": "welcome"}
std::string encode_welcome(std::string_view endpoint_id,
                           std::string_view hub_time);
// {"request_id", "ok": true, "result", "error_code": "", "error_message":
// "", "kind": "response"}
std::string encode_response(std::string_view request_id,
                            const nlohmann::ordered_json& result);
// encode_response with a string result, written directly (the answer to
// every post).
std::string encode_string_response(std::string_view request_id,
                                   std::string_view result);
// The size of encode_string_response's frame (more when its strings need
// escapes), without encoding it.
std::size_t string_response_size_estimate(std::string_view request_id,
                                          std::string_view result);
// {"request_id", "ok": false, "result": null, "error_code",
// "error_message", "kind": "response"}
std::string encode_failure(std::string_view request_id,
                           std::string_view error_code,
                           std::string_view error_message);
// {"code", "message", "envelope_id", "kind": "error"}
std::string encode_error(std::string_view code, std::string_view message,
                         std::optional<std::string_view> envelope_id = {});
// {"envelope", "recipient_id", "kind": "notify"}
std::string encode_notify(const engine::Envelope& envelope,
                          std::string_view recipient_id);
// About the size of a notify of `envelope` (more unless its text is mostly
// escaped), without encoding it.
std::size_t notify_size_estimate(const engine::Envelope& envelope);
// {"kind": "pong"}
std::string encode_pong();

}  // namespace parley::transport
