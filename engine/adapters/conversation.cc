#include "engine/adapters/conversation.h"

#include <nlohmann/json.hpp>

#include "engine/adapters/state_fields.h"
#include "engine/base/event_types.h"
#include "engine/base/python_repr.h"

namespace parley::engine {

namespace {}  // namespace

std::unique_ptr<AdapterState> ConversationState::clone() const {
  return std::make_unique<ConversationState>(*this);
}

JsonText ConversationState::to_json() const {
  return state_text(
      nlohmann::json{{"turn_count", turn_count},
                     {"last_speaker_id", nullable(last_speaker_id)},
                     {"last_envelope_id", nullable(last_envelope_id)}});
}

ConversationAdapter::ConversationAdapter() {
  manifest_.type = "conversation";
  manifest_.version = 1;
  manifest_.participants = {
      .min = 2, .max = 2, .roles = {"initiator", "respondent"}};
  manifest_.default_view_policy = "windowed_summary";
  manifest_.expectations = {
      {.name = "max_silence",
       .on_violation = "audit",
       .params = R"({"seconds":3600})"},
  };
}

Result<std::unique_ptr<AdapterState>> ConversationAdapter::initial_state(
    const ChannelMetadata&) const {
  return std::make_unique<ConversationState>();
}

void ConversationAdapter::fold(const EnvelopeView& envelope,
                               AdapterState& state) const {
  if (envelope.event_type != event_type::kText) return;
  auto& conversation = static_cast<ConversationState&>(state);
  ++conversation.turn_count;
  assign(conversation.last_speaker_id, envelope.sender_id);
  assign(conversation.last_envelope_id, envelope.envelope_id);
}

Result<void> ConversationAdapter::validate_create(
    const ChannelMetadata& metadata) const {
  if (metadata.find_role("initiator") == nullptr) {
    return protocol_error("conversation requires exactly one initiator");
  }
  if (metadata.find_role("respondent") == nullptr) {
    return protocol_error("conversation requires exactly one respondent");
  }
  if (metadata.participants.size() != 2) {
    return protocol_error("conversation requires exactly 2 participants, got " +
                          std::to_string(metadata.participants.size()));
  }
  return {};
}

Result<void> ConversationAdapter::validate_send(const ChannelMetadata& metadata,
                                                const EnvelopeView& envelope,
                                                const AdapterState&) const {
  if (envelope.event_type != event_type::kText) return {};
  if (!metadata.has_participant(envelope.sender_id)) {
    return protocol_error("conversation channel " +
                          python_repr(metadata.channel_id) +
                          " only accepts sends from participants, got " +
                          python_repr(envelope.sender_id));
  }
  return {};
}

AcceptResult ConversationAdapter::on_accepted(const ChannelMetadata&,
                                              const EnvelopeView&,
                                              const AdapterState&) const {
  return {};
}

std::optional<ExpectedTurn> ConversationAdapter::expected_next(
    const ChannelMetadata&, const AdapterState&) const {
  return std::nullopt;
}

ViewPolicy ConversationAdapter::default_view_policy(const ChannelMetadata&,
                                                    std::string_view) const {
  return *ViewPolicy::windowed_summary(10);
}

std::vector<ToolOffer> ConversationAdapter::tools_for(const ChannelMetadata&,
                                                      const AdapterState&,
                                                      std::string_view) const {
  return {say_tool()};
}

}  // namespace parley::engine
