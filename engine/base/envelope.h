// The envelope: AG2's one record for every message of every channel.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace parley::engine {

// A JSON value encoded as a FlexBuffer (see engine/base/flex_json.h); how the
// engine holds `event_data`, so folds read fields without parsing JSON text.
using FlexBytes = std::vector<std::uint8_t>;

// An owning envelope, as posted or read back. `audience` nullopt is JSON
// null (broadcast); an empty vector is the empty list (nobody).
struct Envelope {
  std::string channel_id;
  std::string sender_id;
  std::optional<std::vector<std::string>> audience;
  std::string event_type;
  FlexBytes event_data;  // a FlexBuffer map
  std::string envelope_id;
  std::optional<std::string> task_id;
  std::optional<std::string> causation_id;
  std::optional<std::string> trace_id;
  std::string priority = "normal";
  std::int64_t depth = 0;
  std::optional<std::string> idempotency_key;
  std::string created_at;
  std::optional<std::int64_t> ttl_seconds;
  // Parley's dense per-channel position (1, 2, 3, ...); 0 before the log
  // accepted it. Never part of AG2-shaped JSON.
  std::uint64_t sequence = 0;
};

// What adapters see of an accepted (or about to be accepted) envelope:
// views into memory owned by the caller for the duration of one call.
struct EnvelopeView {
  std::string_view sender_id;
  std::string_view event_type;
  std::string_view envelope_id;
  std::span<const std::uint8_t> event_data;  // a FlexBuffer
};

inline EnvelopeView view_of(const Envelope& envelope) {
  return {envelope.sender_id, envelope.event_type, envelope.envelope_id,
          envelope.event_data};
}

}  // namespace parley::engine
