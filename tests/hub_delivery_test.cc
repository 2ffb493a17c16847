// Delivery: who receives what, pull queues, receipts and cursors, replay of
// what an agent has not acked, inbox capacity.
#include <doctest/doctest.h>

#include "engine/base/event_types.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using engine::Envelope;
using testing::TestHub;

std::vector<std::string> texts(const std::vector<Envelope>& envelopes) {
  std::vector<std::string> out;
  for (const auto& envelope : envelopes) {
    if (envelope.event_type == engine::event_type::kText) {
      out.push_back(envelope.envelope_id);
    }
  }
  return out;
}

struct Trio {
  TestHub t;
  std::string alice = t.add_agent("alice");
  std::string bob = t.add_agent("bob");
  std::string carol = t.add_agent("carol");
  std::string channel;

  Trio() {
    auto opened = t.open(alice, "conversation", {bob});
    REQUIRE(opened.has_value());
    channel = opened->channel_id;
  }
};

TEST_CASE("a broadcast reaches every participant but its sender") {
  Trio trio;
  auto id = trio.t.say(trio.channel, trio.alice, "hi");
  REQUIRE(id.has_value());
  CHECK(texts(trio.t.inbox(trio.bob)) == std::vector{*id});
  CHECK(texts(trio.t.inbox(trio.alice)).empty());
  CHECK(trio.t.inbox(trio.carol).empty());
}

TEST_CASE("an explicit audience is delivered as listed, sender included") {
  Trio trio;
  auto id = trio.t.say(trio.channel, trio.alice, "note to self",
                       std::vector{trio.alice});
  REQUIRE(id.has_value());
  CHECK(texts(trio.t.inbox(trio.alice)) == std::vector{*id});
  CHECK(texts(trio.t.inbox(trio.bob)).empty());
}

TEST_CASE("invite acks are logged but delivered to nobody") {
  Trio trio;
  for (const auto& agent : {trio.alice, trio.bob}) {
    for (const auto& envelope : trio.t.inbox(agent)) {
      CHECK(envelope.event_type != engine::event_type::kChannelInviteAck);
    }
  }
  CHECK(trio.t.wal_types(trio.channel)[1] ==
        engine::event_type::kChannelInviteAck);
}

TEST_CASE("the hub's lifecycle envelopes reach the creator too") {
  Trio trio;
  REQUIRE(trio.t.hub().close_channel(trio.channel, "done").has_value());
  auto last = trio.t.inbox(trio.alice).back();
  CHECK(last.event_type == engine::event_type::kChannelClosed);
  CHECK(trio.t.inbox(trio.bob).back().envelope_id == last.envelope_id);
}

TEST_CASE("a recipient whose inbound rule refuses the sender is skipped") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  engine::Rule picky;
  picky.access.inbound_from = {"al*"};
  const auto bob = t.add_agent("bob", {}, picky);
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  picky.access.inbound_from = {"nobody"};
  REQUIRE(t.hub().set_rule(bob, picky).has_value());
  REQUIRE(t.say(channel->channel_id, alice, "hello?").has_value());
  CHECK(texts(t.inbox(bob)).empty());
  CHECK(texts(t.wal(channel->channel_id)).size() == 1);
}

TEST_CASE(
    "a queue subscriber pops deliveries in order and times out when idle") {
  Trio trio;
  auto queue = trio.t.hub().subscribe_queue(trio.bob);
  auto first = trio.t.say(trio.channel, trio.alice, "one");
  auto second = trio.t.say(trio.channel, trio.alice, "two");
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  CHECK(queue->pop(std::chrono::milliseconds(0))->envelope_id == *first);
  CHECK(queue->pop(std::chrono::milliseconds(0))->envelope_id == *second);
  CHECK_FALSE(queue->pop(std::chrono::milliseconds(10)).has_value());
}

TEST_CASE(
    "an ack receipt moves the cursor forward only, and survives restart") {
  Trio trio;
  auto first = trio.t.say(trio.channel, trio.alice, "one");
  auto second = trio.t.say(trio.channel, trio.alice, "two");
  engine::Hub& hub = trio.t.hub();
  CHECK(hub.inbox_cursor(trio.bob, trio.channel).empty());
  REQUIRE(hub.acknowledge(trio.bob, trio.channel, *second).has_value());
  REQUIRE(hub.acknowledge(trio.bob, trio.channel, *first).has_value());
  CHECK(hub.inbox_cursor(trio.bob, trio.channel) == *second);
  REQUIRE(hub.acknowledge(trio.bob, trio.channel, "ffff", "nack").has_value());
  REQUIRE(hub.acknowledge("ghost", trio.channel, "ffff").has_value());
  CHECK(hub.inbox_cursor(trio.bob, trio.channel) == *second);
  trio.t.restart();
  CHECK(trio.t.hub().inbox_cursor(trio.bob, trio.channel) == *second);
}

TEST_CASE("replay returns what the agent was sent and has not acked") {
  Trio trio;
  auto first = trio.t.say(trio.channel, trio.alice, "one");
  auto own = trio.t.say(trio.channel, trio.bob, "mine");
  auto private_note = trio.t.say(trio.channel, trio.alice, "to myself",
                                 std::vector{trio.alice});
  auto second = trio.t.say(trio.channel, trio.alice, "two");
  REQUIRE(second.has_value());
  engine::Hub& hub = trio.t.hub();
  REQUIRE(hub.acknowledge(trio.bob, trio.channel, *first).has_value());
  auto missed = hub.replay_for(trio.bob, "");
  REQUIRE(missed.has_value());
  CHECK(texts(*missed) == std::vector{*second});
  auto from_start = hub.replay_for("ghost", "");
  REQUIRE(from_start.has_value());
  CHECK(from_start->empty());
  REQUIRE(hub.close_channel(trio.channel).has_value());
  auto after_close = hub.replay_for(trio.bob, "");
  REQUIRE(after_close.has_value());
  CHECK(after_close->empty());
}

TEST_CASE("a full inbox refuses substantive posts until its owner posts") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  engine::Rule small_inbox;
  small_inbox.limits.inbox_max_pending = 1;
  const auto bob = t.add_agent("bob", {}, small_inbox);
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  REQUIRE(t.say(id, alice, "one").has_value());
  auto refused = t.say(id, alice, "two");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == engine::ErrorKind::kInboxFull);
  CHECK(refused.error().message ==
        "recipient '" + bob + "' inbox at capacity (1 >= 1)");
  CHECK(t.post(id, alice, "ag2.task.note", {{"task_id", "t"}}).has_value());
  REQUIRE(t.say(id, bob, "drained").has_value());
  CHECK(t.say(id, alice, "two").has_value());
}

TEST_CASE("a reported turn failure is audited as a RuntimeError") {
  Trio trio;
  REQUIRE(trio.t.hub()
              .report_turn_failure(trio.channel, trio.bob, "e1", "boom")
              .has_value());
  const auto last = trio.t.audit().back();
  CHECK(last["kind"] == "turn_failed");
  CHECK(last["exc_type"] == "RuntimeError");
  CHECK(last["exc_message"] == "boom");
  CHECK(last["agent_id"] == trio.bob);
}

}  // namespace
}  // namespace parley
