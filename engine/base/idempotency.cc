#include "engine/base/idempotency.h"

namespace parley::engine {

std::string post_idempotency_key(std::string_view channel_id,
                                 std::string_view sender_id,
                                 std::string_view key) {
  std::string out = "post:";
  for (std::string_view part : {channel_id, sender_id}) {
    out += std::to_string(part.size());
    out += ':';
    out += part;
  }
  out += key;
  return out;
}

bool same_post_payload(const Envelope& original, const Envelope& retry) {
  return original.audience == retry.audience &&
         original.event_type == retry.event_type &&
         original.event_data == retry.event_data &&
         original.task_id == retry.task_id &&
         original.causation_id == retry.causation_id &&
         original.trace_id == retry.trace_id &&
         original.priority == retry.priority && original.depth == retry.depth &&
         original.ttl_seconds == retry.ttl_seconds;
}

}  // namespace parley::engine
