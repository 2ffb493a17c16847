// Idempotent posts (a deliberate difference: AG2 ignores the key): an
// envelope's `idempotency_key` deduplicates per (channel, sender, key),
// durably, in the log's idempotency index (log/log_store.h).
#pragma once

#include <string>
#include <string_view>

#include "engine/base/envelope.h"

namespace parley::engine {

// The idempotency-index key of a post: "post:" then the channel id and the
// sender id, each as "<byte length>:<bytes>", then the caller's key as is.
// Distinct triples give distinct keys; no other record kind uses "post:".
std::string post_idempotency_key(std::string_view channel_id,
                                 std::string_view sender_id,
                                 std::string_view key);

// True when `retry` asks for what `original` was posted with: the same
// audience, event type, event data, task, causation and trace ids,
// priority, depth and ttl. (Channel, sender and key match by lookup; id
// and created_at are the hub's.)
bool same_post_payload(const Envelope& original, const Envelope& retry);

}  // namespace parley::engine
