// An invitee's answer to an `ag2.channel.invite`, as AG2's clients post it (the
// hub absorbs both: logged, never delivered): an ack, or a reject with a
// reason; audience null, causation = the invite, event_data {"channel_id"}
// (plus "reason").
#pragma once

#include <optional>
#include <string_view>

#include "engine/base/envelope.h"

namespace parley::engine {

// `reject_reason` nullopt: an ack; otherwise a reject giving that reason.
Envelope invite_reply(const Envelope& invite, std::string_view invitee,
                      std::optional<std::string_view> reject_reason = {});

}  // namespace parley::engine
