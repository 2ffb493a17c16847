// Channel lifecycle and the handshake (conformance area 3) through the hub's
// C++ API.
#include <doctest/doctest.h>

#include "engine/event_types.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using testing::TestHub;

TEST_CASE("CHAN-01 two-party handshake reaches ACTIVE with a three-entry WAL") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  for (auto type : {"consulting", "conversation"}) {
    auto channel = t.open(alice, type, {bob});
    REQUIRE(channel.has_value());
    CHECK(channel->state == engine::ChannelState::kActive);
    CHECK(channel->participants.size() == 2);
    CHECK(channel->creator_id == alice);
    CHECK(channel->pending_acks.empty());
    CHECK(t.wal_types(channel->channel_id) ==
          std::vector<std::string>{"ag2.channel.invite",
                                   "ag2.channel.invite.ack",
                                   "ag2.channel.opened"});
  }
}

TEST_CASE("CHAN-06 any reject fails the whole handshake") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  t.set_invitee(carol, TestHub::Invitee::kReject);
  auto channel = t.open(alice, "discussion", {bob, carol});
  REQUIRE_FALSE(channel.has_value());
  CHECK(channel.error().kind == engine::ErrorKind::kProtocol);
  CHECK(channel.error().message.find("rejected") != std::string::npos);
  auto listed = t.hub().list_channels(std::nullopt, std::nullopt);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].state == engine::ChannelState::kClosed);
  CHECK(listed[0].close_reason == "invite_rejected");
  CHECK(listed[0].rejected_by == std::vector<std::string>{carol});
}

TEST_CASE("HYD-10 live channels accept traffic after restart") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  REQUIRE(t.say(channel->channel_id, alice, "how are you?").has_value());
  const auto before = t.state(channel->channel_id);
  t.restart();
  CHECK(t.state(channel->channel_id) == before);
  auto id = t.say(channel->channel_id, bob, "I am fine thanks");
  REQUIRE(id.has_value());
  auto wal = t.wal(channel->channel_id);
  CHECK(wal.back().envelope_id == *id);
  CHECK(wal.back().sequence == wal.size());
  CHECK(t.state(channel->channel_id)["turn_count"] == 2);
}

}  // namespace
}  // namespace parley
