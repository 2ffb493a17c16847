#include "engine/adapters/channel_adapter.h"

#include <array>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/adapters/flex_fields.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"

namespace parley::engine {

std::optional<std::string_view> message_text(const EnvelopeView& envelope) {
  if (envelope.event_type != event_type::kText) return std::nullopt;
  const auto root = flex_fields::root_map(envelope.event_data);
  if (!root) return std::nullopt;
  const auto [text] =
      flex_fields::find(*root, std::array<std::string_view, 1>{"text"});
  return flex_fields::string_of(text);
}

std::optional<std::string> ChannelAdapter::render_envelope(
    const EnvelopeView& envelope) const {
  const auto text = message_text(envelope);
  if (!text) return std::nullopt;
  return std::string(*text);
}

ViewPolicy ChannelAdapter::default_view_policy(const ChannelMetadata&,
                                               std::string_view) const {
  return ViewPolicy::full_transcript();
}

std::optional<std::string> ChannelAdapter::extract_turn_input(
    const EnvelopeView& envelope) const {
  const auto text = message_text(envelope);
  if (!text) return std::nullopt;
  return std::string(*text);
}

std::vector<ToolOffer> ChannelAdapter::tools_for(const ChannelMetadata&,
                                                 const AdapterState&,
                                                 std::string_view) const {
  return {};
}

std::optional<Envelope> ChannelAdapter::build_round_envelope(
    const ChannelMetadata& metadata, std::string_view sender_id,
    const RoundReply& reply, const AdapterState&) const {
  if (reply.body.empty()) return std::nullopt;
  return build_text_envelope(metadata.channel_id, std::string(sender_id),
                             reply.body);
}

Envelope build_text_envelope(std::string channel_id, std::string sender_id,
                             std::string_view text,
                             std::optional<std::vector<std::string>> audience,
                             std::optional<std::string> causation_id) {
  Envelope envelope;
  envelope.channel_id = std::move(channel_id);
  envelope.sender_id = std::move(sender_id);
  envelope.audience = std::move(audience);
  envelope.event_type = std::string(event_type::kText);
  auto data = to_flex(nlohmann::json{{"text", text}});
  // A one-string object always encodes; a failure would be a bug.
  if (!data) throw std::logic_error("to_flex: " + data.error().message);
  envelope.event_data = std::move(*data);
  envelope.causation_id = std::move(causation_id);
  return envelope;
}

ToolOffer say_tool() {
  return {
      .name = std::string(kSayTool),
      .description =
          "Post a message into the current channel (or another channel you "
          "participate in). Your plain reply is already posted at the end of "
          "the turn; use this only for an extra message.",
      .parameters =
          R"({"type":"object","properties":{)"
          R"("content":{"type":"string","description":"the message text"},)"
          R"("audience":{"type":["array","null"],"items":{"type":"string"},)"
          R"("description":"names of the peers who should see it; null: everyone"},)"
          R"("channel_id":{"type":["string","null"],)"
          R"("description":"another channel you participate in; null: this one"}},)"
          R"("required":["content"]})"};
}

}  // namespace parley::engine
