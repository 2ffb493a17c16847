// Consulting through the whole hub: the scenarios that need the hub itself —
// restart mid-consult, a human respondent.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/ops/invite_reply.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using engine::ChannelState;
using nlohmann::json;
using testing::TestHub;

TEST_CASE("CONSULT-09 restart mid-consult re-folds the log") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "consulting", {bob});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  REQUIRE(t.say(id, alice, "What is 6 x 7?", std::vector{bob}).has_value());
  t.restart();
  auto reopened = t.hub().get_channel(id);
  REQUIRE(reopened.has_value());
  CHECK(reopened->manifest.type == "consulting");
  CHECK(reopened->state == ChannelState::kActive);
  CHECK(t.state(id)["initiator_sent"] == true);
  CHECK(t.state(id)["respondent_replied"] == false);
  REQUIRE(t.say(id, bob, "42").has_value());
  auto closed = t.hub().get_channel(id);
  CHECK(closed->state == ChannelState::kClosed);
  CHECK(closed->close_reason == "consulting_complete");
  CHECK(t.wal_types(id).back() == engine::event_type::kChannelClosed);
}

TEST_CASE("CONSULT-13 a human respondent answers and the channel closes") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto reviewer =
      t.add_agent("reviewer", {}, std::nullopt, std::nullopt, "human");
  // The human replies "approved" to any text, as a HumanClient handler
  // would; it also acks its invite.
  std::vector<engine::Envelope> seen;
  t.hub().subscribe(reviewer, [&](const std::string&,
                                  const std::shared_ptr<const engine::Envelope>&
                                      delivered) {
    const engine::Envelope& envelope = *delivered;
    seen.push_back(envelope);
    engine::Envelope reply;
    if (envelope.event_type == engine::event_type::kChannelInvite) {
      reply = engine::invite_reply(envelope, reviewer);
    } else if (envelope.event_type == engine::event_type::kText) {
      reply.channel_id = envelope.channel_id;
      reply.sender_id = reviewer;
      reply.causation_id = envelope.envelope_id;
      reply.event_type = engine::event_type::kText;
      reply.event_data = engine::to_flex(json{{"text", "approved"}}).value();
    } else {
      return;
    }
    REQUIRE(t.hub().post_envelope(std::move(reply)).has_value());
  });
  auto channel = t.open(alice, "consulting", {reviewer});
  REQUIRE(channel.has_value());
  CHECK(channel->state == ChannelState::kActive);
  const auto& id = channel->channel_id;
  REQUIRE(t.say(id, alice, "Please review payout #42", std::vector{reviewer})
              .has_value());
  std::vector<std::string> texts;
  for (const auto& envelope : seen) {
    if (envelope.event_type == engine::event_type::kText) {
      texts.push_back(
          engine::flex_to_json(envelope.event_data)["text"].get<std::string>());
    }
  }
  CHECK(texts == std::vector<std::string>{"Please review payout #42"});
  auto closed = t.hub().get_channel(id);
  CHECK(closed->state == ChannelState::kClosed);
  CHECK(closed->close_reason == "consulting_complete");
}

}  // namespace
}  // namespace parley
