#include "engine/client/envelopes.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/adapters/channel_adapter.h"
#include "engine/base/flex_json.h"

namespace parley::client {

namespace {

engine::FlexBytes flex_of(const nlohmann::json& object) {
  auto flex = engine::to_flex(object);
  // Only objects of strings reach here from this file's own callers; a
  // failure would be a bug, not an input error.
  if (!flex) throw std::logic_error("to_flex: " + flex.error().message);
  return std::move(*flex);
}

}  // namespace

Envelope text_envelope(std::string channel_id, std::string sender_id,
                       std::string_view text,
                       std::optional<std::vector<std::string>> audience,
                       std::optional<std::string> causation_id) {
  return engine::build_text_envelope(
      std::move(channel_id), std::move(sender_id), text, std::move(audience),
      std::move(causation_id));
}

Result<Envelope> make_envelope(
    std::string channel_id, std::string sender_id, std::string type,
    std::string_view event_data_json,
    std::optional<std::vector<std::string>> audience) {
  auto data = nlohmann::json::parse(event_data_json, nullptr, false);
  if (data.is_discarded() || !data.is_object()) {
    return client_error(code::kInvalid, "event_data must be a JSON object");
  }
  auto flex = engine::to_flex(data);
  if (!flex) return client_error(code::kInvalid, flex.error().message);
  Envelope envelope;
  envelope.channel_id = std::move(channel_id);
  envelope.sender_id = std::move(sender_id);
  envelope.audience = std::move(audience);
  envelope.event_type = std::move(type);
  envelope.event_data = std::move(*flex);
  return envelope;
}

Envelope invite_ack(const Envelope& invite, std::string agent_id) {
  Envelope ack;
  ack.channel_id = invite.channel_id;
  ack.sender_id = std::move(agent_id);
  ack.event_type = std::string(event_type::kChannelInviteAck);
  ack.event_data = flex_of({{"channel_id", invite.channel_id}});
  ack.causation_id = invite.envelope_id;
  return ack;
}

std::string text_of(const Envelope& envelope) {
  if (envelope.event_data.empty()) return {};
  const nlohmann::json data = engine::flex_to_json(envelope.event_data);
  if (!data.is_object()) return {};
  auto text = data.find("text");
  return text != data.end() && text->is_string() ? text->get<std::string>()
                                                 : std::string();
}

std::string event_data_json(const Envelope& envelope) {
  if (envelope.event_data.empty()) return "{}";
  return engine::flex_to_json(envelope.event_data).dump();
}

bool visible_to(const Envelope& envelope, std::string_view agent_id) {
  if (!envelope.audience) return true;
  return std::ranges::find(*envelope.audience, agent_id) !=
         envelope.audience->end();
}

}  // namespace parley::client
