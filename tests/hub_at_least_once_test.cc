// At-least-once delivery (scenarios ALO-02..08): receipt cursors and the
// causation index, across restarts.
#include <doctest/doctest.h>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using engine::Envelope;
using testing::TestHub;

struct Pair {
  TestHub t;
  std::string alice = t.add_agent("alice");
  std::string bob = t.add_agent("bob");
  std::string channel;

  Pair() { channel = open(); }

  std::string open() {
    auto opened = t.open(alice, "conversation", {bob});
    REQUIRE(opened.has_value());
    return opened->channel_id;
  }

  std::string send(std::string_view channel_id, std::string_view text,
                   std::optional<std::string> causation = std::nullopt) {
    Envelope envelope;
    envelope.channel_id = std::string(channel_id);
    envelope.sender_id = alice;
    envelope.event_type = std::string(engine::event_type::kText);
    envelope.event_data =
        engine::to_flex(nlohmann::json{{"text", text}}).value();
    envelope.causation_id = std::move(causation);
    auto id = t.hub().post_envelope(std::move(envelope));
    REQUIRE(id.has_value());
    return *id;
  }

  std::string opened_id(std::string_view channel_id) {
    for (const auto& envelope : t.wal(channel_id)) {
      if (envelope.event_type == engine::event_type::kChannelOpened) {
        return envelope.envelope_id;
      }
    }
    FAIL("no opened envelope");
    return {};
  }

  std::optional<Envelope> caused(std::string_view channel_id,
                                 std::string_view causation) {
    auto found =
        t.hub().find_envelope_by_causation(channel_id, alice, causation);
    REQUIRE(found.has_value());
    return *found;
  }
};

std::string text_of(const Envelope& envelope) {
  return engine::flex_to_json(envelope.event_data)["text"].get<std::string>();
}

TEST_CASE("ALO-02 cursors never move backwards, also across a restart") {
  Pair p;
  const auto text = p.send(p.channel, "hello");
  engine::Hub& hub = p.t.hub();
  REQUIRE(hub.acknowledge(p.bob, p.channel, text).has_value());
  REQUIRE(
      hub.acknowledge(p.bob, p.channel, p.opened_id(p.channel)).has_value());
  CHECK(hub.inbox_cursor(p.bob, p.channel) == text);
  p.t.restart();
  REQUIRE(p.t.hub()
              .acknowledge(p.bob, p.channel, p.opened_id(p.channel))
              .has_value());
  CHECK(p.t.hub().inbox_cursor(p.bob, p.channel) == text);
}

TEST_CASE("ALO-03 a nack leaves the cursor and the envelope stays replayable") {
  Pair p;
  const auto first = p.send(p.channel, "one");
  const auto second = p.send(p.channel, "two");
  engine::Hub& hub = p.t.hub();
  REQUIRE(hub.acknowledge(p.bob, p.channel, first).has_value());
  REQUIRE(hub.acknowledge(p.bob, p.channel, second, "nack").has_value());
  CHECK(hub.inbox_cursor(p.bob, p.channel) == first);
  auto missed = hub.replay_for(p.bob, "");
  REQUIRE(missed.has_value());
  REQUIRE_FALSE(missed->empty());
  CHECK(missed->back().envelope_id == second);
  p.t.restart();
  CHECK(p.t.hub().inbox_cursor(p.bob, p.channel) == first);
}

TEST_CASE("ALO-04 unattributable receipts are ignored") {
  Pair p;
  const auto text = p.send(p.channel, "hello");
  engine::Hub& hub = p.t.hub();
  const auto before = hub.store().last_sequence();
  REQUIRE(hub.acknowledge("", p.channel, text).has_value());
  REQUIRE(hub.acknowledge(p.bob, "", text).has_value());
  REQUIRE(hub.acknowledge("ghost", p.channel, text).has_value());
  REQUIRE(hub.acknowledge(p.bob, p.channel, "").has_value());
  CHECK(hub.inbox_cursor(p.bob, p.channel).empty());
  CHECK(hub.inbox_cursor("ghost", p.channel).empty());
  CHECK(hub.store().last_sequence() == before);
}

TEST_CASE("ALO-06 causation lookup finds the envelope, else nothing") {
  Pair p;
  p.send(p.channel, "hello", "logical-retry-1");
  p.send(p.channel, "no causation");
  auto found = p.caused(p.channel, "logical-retry-1");
  REQUIRE(found.has_value());
  CHECK(text_of(*found) == "hello");
  CHECK(found->sender_id == p.alice);
  CHECK_FALSE(p.caused(p.channel, "never-existed").has_value());
  CHECK_FALSE(p.caused(p.channel, "").has_value());
  CHECK_FALSE(
      p.t.hub()
          .find_envelope_by_causation(p.channel, p.bob, "logical-retry-1")
          ->has_value());
}

TEST_CASE("ALO-06 the latest envelope with a causation id wins") {
  Pair p;
  p.send(p.channel, "first try", "c-1");
  p.send(p.channel, "second try", "c-1");
  auto found = p.caused(p.channel, "c-1");
  REQUIRE(found.has_value());
  CHECK(text_of(*found) == "second try");
}

TEST_CASE("ALO-07 causation entries are pruned when the channel ends") {
  Pair p;
  p.send(p.channel, "soon gone", "will-be-pruned");
  REQUIRE(p.caused(p.channel, "will-be-pruned").has_value());
  REQUIRE(p.t.hub().close_channel(p.channel).has_value());
  CHECK_FALSE(p.caused(p.channel, "will-be-pruned").has_value());
  p.t.restart();
  CHECK_FALSE(p.caused(p.channel, "will-be-pruned").has_value());
}

TEST_CASE(
    "ALO-08 the causation index is rebuilt from active channels at "
    "restart") {
  Pair p;
  const auto second = p.open();
  const auto third = p.open();
  p.send(p.channel, "first", "c-first");
  p.send(second, "second", "c-second");
  p.send(third, "third", "c-third");
  REQUIRE(p.t.hub().close_channel(third).has_value());
  p.t.restart();
  auto first_found = p.caused(p.channel, "c-first");
  REQUIRE(first_found.has_value());
  CHECK(text_of(*first_found) == "first");
  auto second_found = p.caused(second, "c-second");
  REQUIRE(second_found.has_value());
  CHECK(text_of(*second_found) == "second");
  CHECK_FALSE(p.caused(third, "c-third").has_value());
}

}  // namespace
}  // namespace parley
