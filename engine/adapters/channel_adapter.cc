#include "engine/adapters/channel_adapter.h"

#include <array>

#include "engine/adapters/flex_fields.h"
#include "engine/base/event_types.h"

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

}  // namespace parley::engine
