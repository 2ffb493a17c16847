// What the hub's API takes and gives besides the domain records: a
// channel's creation request, a pending turn, and the completion of an
// asynchronous call.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/error.h"
#include "engine/base/json_text.h"
#include "engine/registry/identity.h"

namespace parley::engine {

struct CreateChannelRequest {
  std::string creator_id;
  std::string manifest_type;
  std::int64_t manifest_version = 1;
  std::vector<std::string> participants;
  std::optional<std::int64_t> required_acks;
  std::optional<DurationSpec> ttl;  // default: the creator's rule
  std::optional<JsonText> knobs;    // a JSON object
  std::optional<std::string> intent;
  std::optional<JsonText> labels;  // a JSON object of strings
};

struct PendingTurn {
  std::string channel_id;
  std::optional<std::string> triggering_envelope_id;
  std::string expected_at;
};

// The outcome of a completion-style call, told once.
template <typename T>
using Done = std::function<void(Result<T>)>;

// How a completion-style call runs (engine/hub/hub.h).
enum class Dispatch {
  kAsync,   // never blocks the caller; completes on a hub thread
  kInline,  // blocks the calling thread, which completes it
};

}  // namespace parley::engine
