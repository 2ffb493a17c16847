#include "engine/adapters/consulting.h"

#include <nlohmann/json.hpp>

#include "engine/adapters/state_fields.h"
#include "engine/base/event_types.h"
#include "engine/base/python_repr.h"

namespace parley::engine {

namespace {

const ConsultingState& as_consulting(const AdapterState& state) {
  return static_cast<const ConsultingState&>(state);
}

bool has_role(const ChannelMetadata& metadata, std::string_view role) {
  return metadata.find_role(role) != nullptr;
}

}  // namespace

std::unique_ptr<AdapterState> ConsultingState::clone() const {
  return std::make_unique<ConsultingState>(*this);
}

JsonText ConsultingState::to_json() const {
  return state_text(
      nlohmann::json{{"initiator_sent", initiator_sent},
                     {"respondent_replied", respondent_replied},
                     {"last_envelope_id", nullable(last_envelope_id)}});
}

ConsultingAdapter::ConsultingAdapter() {
  manifest_.type = "consulting";
  manifest_.version = 1;
  manifest_.participants = {
      .min = 2, .max = 2, .roles = {"initiator", "respondent"}};
  manifest_.default_view_policy = "full_transcript";
  manifest_.expectations = {
      {.name = "acks_within",
       .on_violation = "auto_close",
       .params = R"({"seconds":30})"},
      {.name = "reply_within",
       .on_violation = "auto_close",
       .params = R"({"seconds":600})"},
  };
}

Result<std::unique_ptr<AdapterState>> ConsultingAdapter::initial_state(
    const ChannelMetadata&) const {
  return std::make_unique<ConsultingState>();
}

void ConsultingAdapter::fold(const EnvelopeView& envelope,
                             AdapterState& state) const {
  if (envelope.event_type != event_type::kText) return;
  auto& consulting = static_cast<ConsultingState&>(state);
  if (!consulting.initiator_sent) {
    consulting.initiator_sent = true;
  } else if (!consulting.respondent_replied) {
    consulting.respondent_replied = true;
  } else {
    return;
  }
  consulting.last_envelope_id.emplace(envelope.envelope_id);
}

Result<void> ConsultingAdapter::validate_create(
    const ChannelMetadata& metadata) const {
  if (!has_role(metadata, "initiator")) {
    return protocol_error("consulting requires exactly one initiator");
  }
  if (!has_role(metadata, "respondent")) {
    return protocol_error("consulting requires exactly one respondent");
  }
  if (metadata.participants.size() != 2) {
    return protocol_error("consulting requires exactly 2 participants, got " +
                          std::to_string(metadata.participants.size()));
  }
  return {};
}

Result<void> ConsultingAdapter::validate_send(
    const ChannelMetadata& metadata, const EnvelopeView& envelope,
    const AdapterState& before) const {
  if (envelope.event_type != event_type::kText) return {};
  const auto& state = as_consulting(before);
  const std::string channel = python_repr(metadata.channel_id);
  if (state.initiator_sent && state.respondent_replied) {
    return protocol_error("consulting channel " + channel +
                          " already complete");
  }
  if (!state.initiator_sent) {
    if (envelope.sender_id != metadata.creator_id) {
      return protocol_error("consulting channel " + channel +
                            " expects first send from initiator " +
                            python_repr(metadata.creator_id) + ", got " +
                            python_repr(envelope.sender_id));
    }
    return {};
  }
  const Participant* respondent = metadata.find_role("respondent");
  if (respondent == nullptr) {
    return protocol_error("consulting channel " + channel +
                          " has no respondent");
  }
  if (envelope.sender_id != respondent->agent_id) {
    return protocol_error("consulting channel " + channel +
                          " expects reply from respondent " +
                          python_repr(respondent->agent_id) + ", got " +
                          python_repr(envelope.sender_id));
  }
  return {};
}

AcceptResult ConsultingAdapter::on_accepted(const ChannelMetadata&,
                                            const EnvelopeView& envelope,
                                            const AdapterState& after) const {
  if (envelope.event_type != event_type::kText) return {};
  const auto& state = as_consulting(after);
  if (state.initiator_sent && state.respondent_replied) {
    return {.next_state = ChannelState::kClosed,
            .auto_close_reason = "consulting_complete"};
  }
  return {};
}

std::optional<ExpectedTurn> ConsultingAdapter::expected_next(
    const ChannelMetadata& metadata, const AdapterState& state) const {
  const auto& consulting = as_consulting(state);
  if (!consulting.initiator_sent) {
    return ExpectedTurn{.agent_id = metadata.creator_id};
  }
  if (consulting.respondent_replied) return std::nullopt;
  const Participant* respondent = metadata.find_role("respondent");
  if (respondent == nullptr) return std::nullopt;
  return ExpectedTurn{.agent_id = respondent->agent_id,
                      .triggering_envelope_id = consulting.last_envelope_id};
}

std::vector<ToolOffer> ConsultingAdapter::tools_for(
    const ChannelMetadata& metadata, const AdapterState& state,
    std::string_view participant_id) const {
  const auto& consulting = as_consulting(state);
  const bool turn =
      participant_id == metadata.creator_id
          ? !consulting.initiator_sent
          : consulting.initiator_sent && !consulting.respondent_replied;
  if (!turn) return {};
  return {say_tool()};
}

}  // namespace parley::engine
