// The two frames a busy connection carries most, decoded straight into
// their typed form with simdjson instead of through a JSON tree: a
// post_envelope request whose envelope is valid, and a receipt.
//
// Contract: decode_hot_frame takes only frames of the plain shape and
// returns nullopt for everything else, and the caller then runs
// decode_frame (and, for a request, the op layer's own parse), which alone
// words every error. Whatever it returns is exactly what that slow path
// gives for the same text: the same strings, the same Envelope, event_data
// as the same FlexBuffer bytes (to_flex's, keys in byte order).
//
// "Plain": the text is JSON simdjson accepts (it refuses raw control bytes
// in strings, lone surrogate escapes and integers beyond 64 bits, which
// nlohmann reads differently or not at all) with no number written as
// `-0` (an integer of another sign to nlohmann); every key of the frame,
// its params, its envelope and each event_data object appears once (the
// slow path keeps the last of duplicates); event_data nests at most
// kMaxStoredJsonDepth levels and has no NUL in a key; every field has the
// type the strict parse accepts; the frame is at most 64 KiB.
//
// Any thread; each thread keeps its own parser.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "engine/base/envelope.h"
#include "engine/transport/frame_codec.h"

namespace parley::transport {

// {"request_id", "op": "post_envelope", "params": {"envelope": {...}},
//  "kind": "request"}, its envelope parsed as the op layer parses it.
// The envelope is made in the shared block the hub keeps it in, so it
// reaches the hub without being moved again. Never null once decoded.
struct PostRequestFrame {
  std::string request_id;
  std::shared_ptr<engine::Envelope> envelope;
};

using HotFrame = std::variant<PostRequestFrame, ReceiptFrame>;

std::optional<HotFrame> decode_hot_frame(std::string_view text);

}  // namespace parley::transport
