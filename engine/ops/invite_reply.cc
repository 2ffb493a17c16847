#include "engine/ops/invite_reply.h"

#include <nlohmann/json.hpp>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"

namespace parley::engine {

Envelope invite_reply(const Envelope& invite, std::string_view invitee,
                      std::optional<std::string_view> reject_reason) {
  Envelope reply;
  reply.channel_id = invite.channel_id;
  reply.sender_id = std::string(invitee);
  reply.event_type = reject_reason ? event_type::kChannelInviteReject
                                   : event_type::kChannelInviteAck;
  nlohmann::json data = {{"channel_id", invite.channel_id}};
  if (reject_reason) data["reason"] = *reject_reason;
  reply.event_data = to_flex(data).value();
  reply.causation_id = invite.envelope_id;
  return reply;
}

}  // namespace parley::engine
