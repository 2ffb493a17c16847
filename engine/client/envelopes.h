// Building and reading envelopes on the client side: AG2's EV_TEXT shape,
// invite acks, event_data as JSON text, and audience visibility. The
// envelope type is the engine's (engine/base/envelope.h); its event_data is
// a FlexBuffer, read and written here as JSON.
//
// Pure functions; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/base/event_types.h"
#include "engine/client/error.h"

namespace parley::client {

using engine::Envelope;
namespace event_type = engine::event_type;

// An unposted EV_TEXT ("ag2.msg.text", event_data {"text": text}); the hub
// stamps envelope_id and created_at. `audience` nullopt broadcasts.
Envelope text_envelope(std::string channel_id, std::string sender_id,
                       std::string_view text,
                       std::optional<std::vector<std::string>> audience = {},
                       std::optional<std::string> causation_id = {});

// An unposted envelope of any event type; `event_data_json` must be a JSON
// object, else kInvalid "event_data must be a JSON object".
Result<Envelope> make_envelope(
    std::string channel_id, std::string sender_id, std::string event_type,
    std::string_view event_data_json,
    std::optional<std::vector<std::string>> audience = {});

// What `agent_id` posts to accept `invite` (AG2's default handler and
// HumanClient): EV_CHANNEL_INVITE_ACK, audience null, event_data
// {"channel_id"}, causation_id the invite's id.
Envelope invite_ack(const Envelope& invite, std::string agent_id);

// event_data["text"] when it is a string, else "".
std::string text_of(const Envelope& envelope);

// event_data as compact JSON text ("{}" when empty).
std::string event_data_json(const Envelope& envelope);

// Whether `agent_id` is in the envelope's audience (null: everybody).
bool visible_to(const Envelope& envelope, std::string_view agent_id);

}  // namespace parley::client
