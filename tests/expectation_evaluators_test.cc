// The built-in expectation evaluators, on hand-built channel contexts: EXP-01,
// EXP-03, EXP-04, EXP-16 and the boundary one tick before each threshold.
#include <doctest/doctest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>
#include <vector>

#include "engine/adapters/discussion.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/expectations/builtin_evaluators.h"

namespace parley {
namespace {

using engine::ChannelMetadata;
using engine::ChannelState;
using engine::Envelope;
using engine::ExpectationContext;
using engine::ExpectationSpec;
using engine::Timestamp;
using nlohmann::json;

constexpr std::string_view kAlice = "alice-id";
constexpr std::string_view kBob = "bob-id";

Timestamp at(std::string_view clock) {
  return *engine::parse_timestamp("2026-01-01T" + std::string(clock) +
                                  "+00:00");
}

ChannelMetadata channel(ChannelState state,
                        std::vector<std::string> pending = {}) {
  ChannelMetadata metadata;
  metadata.channel_id = "c1";
  metadata.creator_id = std::string(kAlice);
  metadata.created_at = "2026-01-01T00:00:00+00:00";
  metadata.state = state;
  metadata.participants = {{std::string(kAlice), "initiator", 0, ""},
                           {std::string(kBob), "respondent", 1, ""}};
  metadata.pending_acks = std::move(pending);
  return metadata;
}

Envelope envelope(std::string_view sender, std::string_view type,
                  std::string_view clock,
                  std::optional<std::vector<std::string>> audience = {}) {
  Envelope out;
  out.channel_id = "c1";
  out.sender_id = std::string(sender);
  out.event_type = std::string(type);
  out.event_data = engine::to_flex(json{{"text", "x"}}).value();
  out.created_at = "2026-01-01T" + std::string(clock) + "+00:00";
  out.audience = std::move(audience);
  return out;
}

ExpectationSpec spec(std::string name, double seconds) {
  return {.name = std::move(name),
          .on_violation = "audit",
          .params = json{{"seconds", seconds}}.dump()};
}

// `wal` folded as the hub folds a channel's envelopes.
engine::ChannelActivity activity_of(const std::vector<Envelope>& wal) {
  engine::ChannelActivity activity;
  std::uint64_t sequence = 0;
  for (const Envelope& envelope : wal) {
    std::vector<std::string_view> audience;
    if (envelope.audience) {
      audience.assign(envelope.audience->begin(), envelope.audience->end());
    }
    activity.fold(
        envelope.sender_id, envelope.event_type, envelope.created_at,
        envelope.audience
            ? std::optional<std::span<const std::string_view>>(audience)
            : std::nullopt,
        ++sequence);
  }
  return activity;
}

std::optional<engine::Violation> evaluate(
    const std::shared_ptr<const engine::ExpectationEvaluator>& evaluator,
    const ChannelMetadata& metadata, const std::vector<Envelope>& wal,
    std::string_view now, double seconds,
    const engine::ChannelAdapter* adapter = nullptr,
    const engine::AdapterState* state = nullptr) {
  const engine::ChannelActivity activity = activity_of(wal);
  const ExpectationContext context{.metadata = metadata,
                                   .activity = activity,
                                   .adapter = adapter,
                                   .state = state,
                                   .now = at(now)};
  return evaluator->evaluate(context,
                             spec(std::string(evaluator->name()), seconds));
}

TEST_CASE(
    "EXP-01 acks_within fires only for a pending channel with pending acks") {
  auto acks = engine::acks_within_evaluator();
  const auto pending = channel(ChannelState::kPending, {std::string(kBob)});
  auto fired = evaluate(acks, pending, {}, "00:01:00", 30);
  REQUIRE(fired.has_value());
  CHECK(fired->violators == std::vector<std::string>{std::string(kBob)});
  const json detail = json::parse(fired->detail);
  CHECK(detail["threshold_seconds"] == 30.0);
  CHECK(detail["elapsed_seconds"] == 60.0);
  CHECK_FALSE(evaluate(acks, pending, {}, "00:00:30", 60).has_value());
  CHECK_FALSE(
      evaluate(acks, channel(ChannelState::kPending), {}, "00:10:00", 30)
          .has_value());
  CHECK_FALSE(evaluate(acks,
                       channel(ChannelState::kActive, {std::string(kBob)}), {},
                       "00:10:00", 30)
                  .has_value());
}

TEST_CASE("EXP-03 max_silence is channel-wide") {
  auto silence = engine::max_silence_evaluator();
  const auto active = channel(ChannelState::kActive);
  const std::vector early{
      envelope(kAlice, engine::event_type::kText, "00:00:30")};
  auto fired = evaluate(silence, active, early, "00:02:00", 60);
  REQUIRE(fired.has_value());
  CHECK(fired->violators.empty());
  CHECK(json::parse(fired->detail) ==
        json{{"elapsed_seconds", 90.0}, {"threshold_seconds", 60.0}});
  const std::vector late{
      envelope(kAlice, engine::event_type::kText, "00:01:30")};
  CHECK_FALSE(evaluate(silence, active, late, "00:02:00", 60).has_value());
}

TEST_CASE("EXP-03 max_silence anchors on content only, else on creation") {
  auto silence = engine::max_silence_evaluator();
  const auto active = channel(ChannelState::kActive);
  // No content: the anchor is created_at (00:00:00).
  CHECK(evaluate(silence, active, {}, "00:01:00", 60).has_value());
  CHECK_FALSE(evaluate(silence, active, {}, "00:00:59", 60).has_value());
  // Protocol, task and violation envelopes are not content; a custom type
  // is.
  const std::vector noise{
      envelope(kAlice, engine::event_type::kText, "00:00:10"),
      envelope(kAlice, engine::event_type::kChannelOpened, "00:01:50"),
      envelope(kAlice, "ag2.task.updated", "00:01:50"),
      envelope(kAlice, engine::event_type::kExpectationViolated, "00:01:50")};
  CHECK(evaluate(silence, active, noise, "00:01:10", 60).has_value());
  auto custom = noise;
  custom.push_back(envelope(kBob, "acme.custom", "00:01:00"));
  CHECK_FALSE(evaluate(silence, active, custom, "00:01:10", 60).has_value());
  CHECK_FALSE(
      evaluate(silence, channel(ChannelState::kPending), {}, "05:00:00", 60)
          .has_value());
}

TEST_CASE(
    "EXP-04 acks_within fires at exactly the threshold, not a tick before") {
  auto acks = engine::acks_within_evaluator();
  const auto pending = channel(ChannelState::kPending, {std::string(kBob)});
  CHECK(evaluate(acks, pending, {}, "00:00:30", 30).has_value());
  CHECK_FALSE(evaluate(acks, pending, {}, "00:00:29.999000", 30).has_value());
}

TEST_CASE(
    "EXP-04 max_silence fires at exactly the threshold, not a tick before") {
  auto silence = engine::max_silence_evaluator();
  const auto active = channel(ChannelState::kActive);
  CHECK(evaluate(silence, active, {}, "00:01:00", 60).has_value());
  CHECK_FALSE(evaluate(silence, active, {}, "00:00:59.999999", 60).has_value());
}

TEST_CASE(
    "EXP-04 reply_within fires exactly the threshold after the addressed "
    "envelope") {
  auto reply = engine::reply_within_evaluator();
  const auto active = channel(ChannelState::kActive);
  const std::vector wal{envelope(kAlice, engine::event_type::kText, "00:00:10",
                                 std::vector{std::string(kBob)})};
  auto fired = evaluate(reply, active, wal, "00:01:10", 60);
  REQUIRE(fired.has_value());
  CHECK(fired->violators == std::vector<std::string>{std::string(kBob)});
  CHECK(json::parse(fired->detail) == json{{"threshold_seconds", 60.0}});
  CHECK_FALSE(evaluate(reply, active, wal, "00:01:09.999", 60).has_value());
}

TEST_CASE(
    "reply_within: an answer at or after the last text clears the "
    "participant") {
  auto reply = engine::reply_within_evaluator();
  const auto active = channel(ChannelState::kActive);
  std::vector wal{envelope(kAlice, engine::event_type::kText, "00:00:10"),
                  envelope(kBob, engine::event_type::kText, "00:00:20")};
  // bob answered; alice now has bob's unanswered text.
  auto fired = evaluate(reply, active, wal, "00:05:00", 60);
  REQUIRE(fired.has_value());
  CHECK(fired->violators == std::vector<std::string>{std::string(kAlice)});
  // A text addressed to someone else is not bob's to answer.
  const std::vector elsewhere{envelope(kAlice, engine::event_type::kText,
                                       "00:00:10",
                                       std::vector{std::string("carol-id")})};
  CHECK_FALSE(evaluate(reply, active, elsewhere, "00:05:00", 60).has_value());
  // Packets are ignored.
  const std::vector packet{
      envelope(kAlice, engine::event_type::kPacket, "00:00:10")};
  CHECK_FALSE(evaluate(reply, active, packet, "00:05:00", 60).has_value());
}

TEST_CASE("EXP-16 turn_within names the participant expected next") {
  auto turn = engine::turn_within_evaluator();
  engine::DiscussionAdapter discussion;
  auto metadata = channel(ChannelState::kActive);
  auto state = discussion.initial_state(metadata);
  REQUIRE(state.has_value());
  // alice spoke at 00:00:30, so bob holds the turn.
  Envelope said = envelope(kAlice, engine::event_type::kText, "00:00:30");
  said.envelope_id = "e1";
  discussion.fold(engine::view_of(said), **state);
  const std::vector wal{said};
  auto fired =
      evaluate(turn, metadata, wal, "00:02:00", 60, &discussion, state->get());
  REQUIRE(fired.has_value());
  CHECK(fired->violators == std::vector<std::string>{std::string(kBob)});
  const std::vector late{
      envelope(kAlice, engine::event_type::kText, "00:01:30")};
  CHECK_FALSE(
      evaluate(turn, metadata, late, "00:02:00", 60, &discussion, state->get())
          .has_value());
  // No adapter expecting anybody: a channel-wide violation.
  auto wide = evaluate(turn, metadata, wal, "00:02:00", 60);
  REQUIRE(wide.has_value());
  CHECK(wide->violators.empty());
  CHECK_FALSE(evaluate(turn, channel(ChannelState::kPending), wal, "00:02:00",
                       60, &discussion, state->get())
                  .has_value());
}

TEST_CASE("turn_within anchors no earlier than a hide that moved the turn") {
  auto turn = engine::turn_within_evaluator();
  const auto metadata = channel(ChannelState::kActive);
  const engine::ChannelActivity nothing;
  const ExpectationContext context{.metadata = metadata,
                                   .activity = nothing,
                                   .now = at("00:02:00"),
                                   .turn_moved_at = at("00:01:30")};
  CHECK_FALSE(turn->evaluate(context, spec("turn_within", 60)).has_value());
  CHECK(turn->evaluate(context, spec("turn_within", 30)).has_value());
}

TEST_CASE("evaluators fall back to AG2's default thresholds") {
  const auto pending = channel(ChannelState::kPending, {std::string(kBob)});
  const engine::ChannelActivity nothing;
  ExpectationSpec defaults{.name = "acks_within", .on_violation = "audit"};
  const ExpectationContext early{
      .metadata = pending, .activity = nothing, .now = at("00:00:29")};
  const ExpectationContext due{
      .metadata = pending, .activity = nothing, .now = at("00:00:30")};
  auto acks = engine::acks_within_evaluator();
  CHECK_FALSE(acks->evaluate(early, defaults).has_value());
  CHECK(acks->evaluate(due, defaults).has_value());
}

}  // namespace
}  // namespace parley
