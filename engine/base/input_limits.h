// Limits on what enters Parley from outside: control-plane ops (scripts
// and the wire), AG2 imports and in-process calls alike. Every refusal is
// ErrorKind::kInvalid (wire code "error") with a message naming the field
// and the limit; nothing is written then.
#pragma once

#include <cstddef>
#include <string_view>

#include "engine/base/envelope.h"
#include "engine/base/error.h"

namespace parley::engine {

// Nesting levels (arrays and objects) of a JSON document Parley parses: a
// script line, a wire frame, an imported file.
inline constexpr std::size_t kMaxJsonDepth = 64;
// Nesting levels of one JSON value Parley stores: event_data, knobs,
// labels, a checkpoint, an audit record, ...
inline constexpr std::size_t kMaxStoredJsonDepth = 32;
// Bytes of a name or key: agent names, idempotency keys, event types,
// capabilities, outcomes.
inline constexpr std::size_t kMaxNameBytes = 256;
// Bytes of one stored text or JSON value (JSON values counted as the
// FlexBuffer or compact JSON they are stored as): event_data, a SKILL.md,
// a checkpoint, an audit record, a turn failure's message.
inline constexpr std::size_t kMaxValueBytes = 1 << 20;

// The deepest nesting of arrays and objects in JSON `text` (0 for a
// scalar), found by one linear scan that does not parse (so it is safe on
// any input, however deep).
std::size_t json_depth(std::string_view text);

// Whether `text` is well-formed UTF-8 (no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `value` is valid UTF-8 of at most kMaxNameBytes bytes.
Result<void> check_name(std::string_view field, std::string_view value);
// `value` is valid UTF-8 of at most kMaxValueBytes bytes.
Result<void> check_text(std::string_view field, std::string_view value);
// `json` (well-formed JSON text) is at most kMaxValueBytes bytes, nests at
// most kMaxStoredJsonDepth levels and has no NUL in an object key: what
// every JSON value stored as a FlexBuffer (engine/base/flex_json.h) must
// be, checked where it enters the engine. A value the hub also stores
// nested inside another passes a smaller `max_depth`.
Result<void> check_json_text(std::string_view field, std::string_view json,
                             std::size_t max_depth = kMaxStoredJsonDepth);

// An envelope a client posts: event type, idempotency key, trace and task
// ids are names; event_data at most kMaxValueBytes encoded; depth and
// ttl_seconds not negative.
Result<void> check_envelope(const Envelope& envelope);

}  // namespace parley::engine
