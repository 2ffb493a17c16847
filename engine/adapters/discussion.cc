#include "engine/adapters/discussion.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/adapters/state_fields.h"
#include "engine/base/event_types.h"
#include "engine/base/python_repr.h"

namespace parley::engine {

namespace {

constexpr std::string_view kRoundRobin = "round_robin";

const DiscussionState& as_discussion(const AdapterState& state) {
  return static_cast<const DiscussionState&>(state);
}

std::size_t index_of(const std::vector<std::string>& order,
                     std::string_view id) {
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] == id) return i;
  }
  return DiscussionState::kNoIndex;
}

}  // namespace

std::vector<std::string> participant_order(const ChannelMetadata& metadata) {
  std::vector<const Participant*> sorted;
  sorted.reserve(metadata.participants.size());
  for (const auto& participant : metadata.participants) {
    sorted.push_back(&participant);
  }
  std::ranges::stable_sort(sorted, {}, &Participant::order);
  std::vector<std::string> order;
  order.reserve(sorted.size());
  for (const Participant* participant : sorted) {
    order.push_back(participant->agent_id);
  }
  return order;
}

std::unique_ptr<AdapterState> DiscussionState::clone() const {
  return std::make_unique<DiscussionState>(*this);
}

JsonText DiscussionState::to_json() const {
  nlohmann::json out{{"participant_order", participant_order},
                     {"expected_next_speaker", expected_next_speaker},
                     {"last_speaker_id", nullable(last_speaker_id)},
                     {"last_envelope_id", nullable(last_envelope_id)},
                     {"turn_count", turn_count}};
  if (!hidden.empty()) out["hidden_participants"] = hidden;
  return state_text(out);
}

std::size_t DiscussionState::next_after(std::size_t index) const {
  const std::size_t size = participant_order.size();
  for (std::size_t step = 1; step <= size; ++step) {
    const std::size_t candidate = (index + step) % size;
    if (std::ranges::find(hidden, participant_order[candidate]) ==
        hidden.end()) {
      return candidate;
    }
  }
  return (index + 1) % size;
}

DiscussionAdapter::DiscussionAdapter() {
  manifest_.type = "discussion";
  manifest_.version = 1;
  manifest_.participants = {.min = 2, .max = std::nullopt, .roles = {}};
  manifest_.knobs_schema = {{"ordering", "str"}};
  manifest_.default_view_policy = "named_windowed_summary";
  manifest_.expectations = {
      {.name = "turn_within",
       .on_violation = "warn",
       .params = R"({"seconds":120})"},
      {.name = "turn_within",
       .on_violation = "hide",
       .params = R"({"seconds":600})"},
  };
}

Result<std::unique_ptr<AdapterState>> DiscussionAdapter::initial_state(
    const ChannelMetadata& metadata) const {
  auto state = std::make_unique<DiscussionState>();
  state->participant_order = participant_order(metadata);
  state->expected_next_speaker = metadata.creator_id;
  state->expected_index =
      index_of(state->participant_order, state->expected_next_speaker);
  return state;
}

void DiscussionAdapter::fold(const EnvelopeView& envelope,
                             AdapterState& state) const {
  if (envelope.event_type != event_type::kText) return;
  auto& discussion = static_cast<DiscussionState&>(state);
  const auto& order = discussion.participant_order;
  std::size_t index = discussion.expected_index;
  if (index >= order.size() || order[index] != envelope.sender_id) {
    index = index_of(order, envelope.sender_id);
    if (index == DiscussionState::kNoIndex) return;
  }
  const std::size_t next = !discussion.hidden.empty()
                               ? discussion.next_after(index)
                           : index + 1 == order.size() ? 0
                                                       : index + 1;
  discussion.expected_next_speaker.assign(order[next]);
  discussion.expected_index = next;
  assign(discussion.last_speaker_id, envelope.sender_id);
  assign(discussion.last_envelope_id, envelope.envelope_id);
  ++discussion.turn_count;
}

Result<void> DiscussionAdapter::validate_create(
    const ChannelMetadata& metadata) const {
  if (metadata.participants.size() < 2) {
    return protocol_error("discussion requires at least 2 participants, got " +
                          std::to_string(metadata.participants.size()));
  }
  auto knobs = nlohmann::json::parse(metadata.knobs, nullptr, false);
  if (knobs.is_object()) {
    auto ordering = knobs.find("ordering");
    if (ordering != knobs.end() &&
        !(ordering->is_string() &&
          ordering->get_ref<const std::string&>() == kRoundRobin)) {
      return protocol_error(
          "discussion knobs.ordering=" + python_repr_json(*ordering) +
          " not supported; choose from ['round_robin']");
    }
  }
  return {};
}

Result<void> DiscussionAdapter::validate_send(
    const ChannelMetadata& metadata, const EnvelopeView& envelope,
    const AdapterState& before) const {
  if (envelope.event_type != event_type::kText) return {};
  const auto& state = as_discussion(before);
  if (envelope.sender_id != state.expected_next_speaker) {
    return protocol_error("discussion channel " +
                          python_repr(metadata.channel_id) + " expects " +
                          python_repr(state.expected_next_speaker) +
                          " to speak, got " + python_repr(envelope.sender_id));
  }
  return {};
}

AcceptResult DiscussionAdapter::on_accepted(const ChannelMetadata&,
                                            const EnvelopeView&,
                                            const AdapterState&) const {
  return {};
}

std::optional<ExpectedTurn> DiscussionAdapter::expected_next(
    const ChannelMetadata&, const AdapterState& state) const {
  const auto& discussion = as_discussion(state);
  return ExpectedTurn{.agent_id = discussion.expected_next_speaker,
                      .triggering_envelope_id = discussion.last_envelope_id};
}

void DiscussionAdapter::hide(std::string_view participant_id,
                             AdapterState& state) const {
  auto& discussion = static_cast<DiscussionState&>(state);
  const std::size_t index =
      index_of(discussion.participant_order, participant_id);
  if (index == DiscussionState::kNoIndex ||
      std::ranges::find(discussion.hidden, participant_id) !=
          discussion.hidden.end()) {
    return;
  }
  discussion.hidden.emplace_back(participant_id);
  if (discussion.expected_next_speaker != participant_id) return;
  const std::size_t next = discussion.next_after(index);
  discussion.expected_next_speaker = discussion.participant_order[next];
  discussion.expected_index = next;
}

ViewPolicy DiscussionAdapter::default_view_policy(
    const ChannelMetadata& metadata, std::string_view) const {
  const auto participants =
      static_cast<std::int64_t>(metadata.participants.size());
  return *ViewPolicy::named_windowed_summary(
      std::max<std::int64_t>(2 * participants, 4));
}

}  // namespace parley::engine
