// Rules, the arbiter and limits (scenarios LIM-*): who may send to whom, inbox
// capacity and its pressure signal, delegation depth, concurrent channels, the
// per-sender rate limit, the pluggable decision seam, and that rules outlive a
// restart.
#include <doctest/doctest.h>

#include <chrono>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using engine::Envelope;
using engine::ErrorKind;
using engine::Rule;
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

Rule outbound(std::vector<std::string> patterns) {
  Rule rule;
  rule.access.outbound_to = std::move(patterns);
  return rule;
}

Rule inbox(std::int64_t max_pending,
           std::optional<std::int64_t> high_water = std::nullopt) {
  Rule rule;
  rule.limits.inbox_max_pending = max_pending;
  rule.limits.inbox_high_water = high_water;
  return rule;
}

Rule rate(std::int64_t per_minute, std::int64_t burst) {
  Rule rule;
  rule.limits.rate_per_minute = per_minute;
  rule.limits.rate_burst = burst;
  return rule;
}

void check_denied(const engine::Result<std::string>& result,
                  std::string_view fragment,
                  ErrorKind kind = ErrorKind::kAccessDenied) {
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().kind == kind);
  CHECK_MESSAGE(result.error().message.find(fragment) != std::string::npos,
                result.error().message);
}

struct Pair {
  TestHub t;
  std::string alice;
  std::string bob;
  std::string channel;

  explicit Pair(Rule alice_rule = {}, Rule bob_rule = {}) {
    alice = t.add_agent("alice", {}, alice_rule);
    bob = t.add_agent("bob", {}, bob_rule);
    auto opened = t.open(alice, "conversation", {bob});
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    channel = opened->channel_id;
  }
};

// Counts on_inbox_pressure calls.
struct PressureListener : engine::HubListener {
  std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> events;
  void on_inbox_pressure(std::string_view agent_id, std::int64_t pending,
                         std::int64_t cap) override {
    events.emplace_back(std::string(agent_id), pending, cap);
  }
};

TEST_CASE("LIM-01 a send outside the outbound whitelist is denied") {
  Pair p;
  REQUIRE(p.t.hub().set_rule(p.alice, outbound({"carol"})).has_value());
  const auto before = p.t.wal(p.channel).size();
  check_denied(p.t.say(p.channel, p.alice, "hi", std::vector{p.bob}),
               "sender 'alice' not permitted to send to 'bob'");
  CHECK(p.t.wal(p.channel).size() == before);
}

TEST_CASE("LIM-01 the outbound whitelist survives a restart") {
  Pair p;
  REQUIRE(p.t.hub().set_rule(p.alice, outbound({"carol"})).has_value());
  p.t.restart();
  check_denied(p.t.say(p.channel, p.alice, "hi", std::vector{p.bob}),
               "not permitted to send to 'bob'");
  REQUIRE(p.t.hub().set_rule(p.alice, outbound({"b*"})).has_value());
  p.t.restart();
  CHECK(p.t.say(p.channel, p.alice, "hi", std::vector{p.bob}).has_value());
}

TEST_CASE("LIM-01 a creator whose whitelist excludes the invitee cannot open") {
  TestHub t;
  const auto alice = t.add_agent("alice", {}, outbound({"carol"}));
  const auto bob = t.add_agent("bob");
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().kind == ErrorKind::kAccessDenied);
  CHECK(opened.error().message ==
        "sender 'alice' not permitted to send to 'bob'");
  auto closed = t.hub().list_channels(std::nullopt, std::nullopt);
  REQUIRE(closed.size() == 1);
  CHECK(closed[0].close_reason == "invite_failed");
}

TEST_CASE("LIM-02 outbound globs admit matching peers only, through the hub") {
  TestHub t;
  const auto alice = t.add_agent("alice", {}, outbound({"bot-*"}));
  const auto bot = t.add_agent("bot-bob");
  const auto eve = t.add_agent("user-eve");
  auto opened = t.open(alice, "conversation", {bot});
  REQUIRE(opened.has_value());
  CHECK(t.say(opened->channel_id, alice, "hi", std::vector{bot}).has_value());
  check_denied(t.say(opened->channel_id, alice, "hi", std::vector{eve}),
               "not permitted to send to 'user-eve'");
}

TEST_CASE("LIM-03 self and broadcasts are exempt from the outbound check") {
  TestHub t;
  const auto alice = t.add_agent("alice", {}, outbound({"bob"}));
  const auto bob = t.add_agent("bob");
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  const auto& channel = opened->channel_id;
  bool saw_opened = false;
  for (const auto& envelope : t.inbox(alice)) {
    saw_opened |= envelope.event_type == engine::event_type::kChannelOpened;
  }
  CHECK(saw_opened);
  CHECK(t.say(channel, alice, "both", std::vector{alice, bob}).has_value());
  REQUIRE(t.hub().set_rule(alice, outbound({"nobody"})).has_value());
  CHECK(t.say(channel, alice, "to everyone").has_value());
  CHECK(t.say(channel, alice, "to me", std::vector{alice}).has_value());
  check_denied(t.say(channel, alice, "to bob", std::vector{bob}),
               "not permitted to send to 'bob'");
}

TEST_CASE("LIM-04 access is checked before the channel exists") {
  TestHub t;
  const auto alice = t.add_agent("alice", {}, outbound({"only-carol"}));
  const auto bob = t.add_agent("bob");
  check_denied(t.say("no-such-channel", alice, "hi", std::vector{bob}),
               "not permitted to send to 'bob'");
  auto missing = t.say("no-such-channel", alice, "hi", std::vector{alice});
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == ErrorKind::kNotFound);
}

TEST_CASE("delegation depth: at the cap is accepted, one above is denied") {
  Rule capped;
  capped.limits.delegation_depth = 2;
  Pair p(capped);
  auto post_at = [&](std::int64_t depth) {
    Envelope envelope;
    envelope.channel_id = p.channel;
    envelope.sender_id = p.alice;
    envelope.event_type = std::string(engine::event_type::kText);
    envelope.event_data =
        engine::to_flex(nlohmann::json{{"text", "deep"}}).value();
    envelope.depth = depth;
    return p.t.hub().post_envelope(std::move(envelope));
  };
  CHECK(post_at(1).has_value());
  CHECK(post_at(2).has_value());
  check_denied(post_at(3), "sender 'alice' exceeded delegation_depth (3 > 2)");
  p.t.restart();
  check_denied(post_at(3), "exceeded delegation_depth (3 > 2)");
  capped.limits.delegation_depth = 0;
  REQUIRE(p.t.hub().set_rule(p.alice, capped).has_value());
  CHECK(post_at(50).has_value());
}

TEST_CASE("max_concurrent_channels: one below the cap opens, at the cap not") {
  TestHub t;
  Rule two;
  two.limits.max_concurrent_channels = 2;
  const auto alice = t.add_agent("alice", {}, two);
  const auto bob = t.add_agent("bob");
  auto first = t.open(alice, "conversation", {bob});
  REQUIRE(first.has_value());
  REQUIRE(t.open(alice, "conversation", {bob}).has_value());
  auto third = t.open(alice, "conversation", {bob});
  REQUIRE_FALSE(third.has_value());
  CHECK(third.error().kind == ErrorKind::kAccessDenied);
  CHECK(third.error().message == "creator '" + alice +
                                     "' exceeded max_concurrent_channels "
                                     "(2 >= 2)");
  t.restart();
  CHECK_FALSE(t.open(alice, "conversation", {bob}).has_value());
  REQUIRE(t.hub().close_channel(first->channel_id).has_value());
  CHECK(t.open(alice, "conversation", {bob}).has_value());
}

TEST_CASE("channel_ttl_default of the creator's rule survives a restart") {
  TestHub t;
  Rule short_lived;
  short_lived.limits.channel_ttl_default = std::string("90s");
  const auto alice = t.add_agent("alice", {}, short_lived);
  const auto bob = t.add_agent("bob");
  t.restart();
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  CHECK(opened->expires_at == "2026-01-01T00:01:30+00:00");
}

TEST_CASE("LIM-07 a full inbox refuses the next substantive send") {
  Pair p({}, inbox(2));
  REQUIRE(p.t.say(p.channel, p.alice, "one", std::vector{p.bob}).has_value());
  REQUIRE(p.t.say(p.channel, p.alice, "two", std::vector{p.bob}).has_value());
  const auto before = p.t.wal(p.channel).size();
  check_denied(p.t.say(p.channel, p.alice, "three", std::vector{p.bob}),
               "inbox at capacity", ErrorKind::kInboxFull);
  CHECK(p.t.wal(p.channel).size() == before);
  REQUIRE(p.t.say(p.channel, p.bob, "reading").has_value());
  CHECK(p.t.say(p.channel, p.alice, "three", std::vector{p.bob}).has_value());
}

TEST_CASE("LIM-07 a broadcast is checked against every other participant") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol", {}, inbox(1));
  auto opened = t.open(alice, "discussion", {bob, carol});
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  REQUIRE(t.say(opened->channel_id, alice, "round one").has_value());
  check_denied(t.say(opened->channel_id, bob, "round one"),
               "recipient '" + carol + "' inbox at capacity (1 >= 1)",
               ErrorKind::kInboxFull);
}

TEST_CASE("LIM-07 inbox counters reset at restart, the cap itself survives") {
  Pair p({}, inbox(2));
  REQUIRE(p.t.say(p.channel, p.alice, "one", std::vector{p.bob}).has_value());
  REQUIRE(p.t.say(p.channel, p.alice, "two", std::vector{p.bob}).has_value());
  p.t.restart();
  REQUIRE(p.t.say(p.channel, p.alice, "three", std::vector{p.bob}).has_value());
  REQUIRE(p.t.say(p.channel, p.alice, "four", std::vector{p.bob}).has_value());
  check_denied(p.t.say(p.channel, p.alice, "five", std::vector{p.bob}),
               "inbox at capacity (2 >= 2)", ErrorKind::kInboxFull);
}

TEST_CASE("LIM-07 an offline recipient's counter does not rise") {
  Pair p({}, inbox(1));
  p.t.hub().unsubscribe(p.bob);
  REQUIRE(p.t.say(p.channel, p.alice, "one").has_value());
  CHECK(p.t.say(p.channel, p.alice, "two").has_value());
}

TEST_CASE("LIM-08 protocol events ignore inbox capacity") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob", {}, inbox(1));
  const auto carol = t.add_agent("carol");
  auto first = t.open(alice, "conversation", {bob});
  REQUIRE(first.has_value());
  REQUIRE(t.say(first->channel_id, alice, "fill").has_value());
  check_denied(t.say(first->channel_id, alice, "more"), "inbox at capacity",
               ErrorKind::kInboxFull);
  auto second = t.open(carol, "conversation", {bob});
  REQUIRE_MESSAGE(second.has_value(), testing::error_message(second));
  CHECK(second->state == engine::ChannelState::kActive);
  CHECK(t.post(second->channel_id, carol, "ag2.task.progress", {{"step", "x"}},
               std::vector{bob})
            .has_value());
}

TEST_CASE("LIM-09 unregister clears the agent's inbox counter") {
  Pair p;
  REQUIRE(p.t.say(p.channel, p.alice, "one").has_value());
  CHECK(p.t.hub().health().pending_inbox.at(p.bob) == 1);
  REQUIRE(p.t.hub().unregister(p.bob).has_value());
  CHECK_FALSE(p.t.hub().health().pending_inbox.contains(p.bob));
}

TEST_CASE("LIM-10 inbox pressure fires once per crossing of the high water") {
  auto listener = std::make_shared<PressureListener>();
  TestHub t;
  t.set_options([&](engine::HubOptions& options) {
    options.listeners.push_back(listener);
  });
  t.restart();
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob", {}, inbox(10, 3));
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  const auto& channel = opened->channel_id;
  REQUIRE(t.say(channel, alice, "1").has_value());
  REQUIRE(t.say(channel, alice, "2").has_value());
  CHECK(listener->events.empty());  // one below the mark
  REQUIRE(t.say(channel, alice, "3").has_value());
  REQUIRE(listener->events.size() == 1);
  CHECK(listener->events[0] ==
        std::tuple{bob, std::int64_t{3}, std::int64_t{10}});
  REQUIRE(t.say(channel, alice, "4").has_value());
  CHECK(listener->events.size() == 1);
  // Draining below the mark and crossing again signals again.
  REQUIRE(t.say(channel, bob, "ok").has_value());
  REQUIRE(t.say(channel, bob, "ok").has_value());
  REQUIRE(t.say(channel, alice, "5").has_value());
  CHECK(listener->events.size() == 2);
}

TEST_CASE("LIM-10 the default high water is 80 % of the cap, 0 disables") {
  auto listener = std::make_shared<PressureListener>();
  TestHub t;
  t.set_options([&](engine::HubOptions& options) {
    options.listeners.push_back(listener);
  });
  t.restart();
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob", {}, inbox(5));
  const auto carol = t.add_agent("carol", {}, inbox(5, 0));
  const auto dave = t.add_agent("dave", {}, inbox(0));
  for (const auto& peer : {bob, carol, dave}) {
    auto opened = t.open(alice, "conversation", {peer});
    REQUIRE(opened.has_value());
    for (int i = 0; i < 3; ++i) {
      REQUIRE(t.say(opened->channel_id, alice, "x").has_value());
    }
    CHECK(listener->events.size() == (peer == bob ? 0 : 1));
    REQUIRE(t.say(opened->channel_id, alice, "x").has_value());
  }
  REQUIRE(listener->events.size() == 1);
  CHECK(listener->events[0] ==
        std::tuple{bob, std::int64_t{4}, std::int64_t{5}});
}

TEST_CASE("LIM-11 unknown audience ids are dropped silently") {
  Pair p;
  auto id = p.t.say(p.channel, p.alice, "hi",
                    std::vector<std::string>{p.bob, "ghost-id"});
  REQUIRE(id.has_value());
  CHECK_FALSE(id->empty());
  CHECK(texts(p.t.inbox(p.bob)) == std::vector{*id});
}

// Denies every send with its own reason.
struct DenyAll : engine::Arbiter {
  engine::Result<void> authorize_send(const engine::Registry&,
                                      const engine::AgentRecord&,
                                      const Envelope&) const override {
    return engine::access_denied("custom denial");
  }
};

// Denies any depth above a cap of -1.
struct DepthPolicy : engine::RuleBasedArbiter {
  engine::Result<void> authorize_send(const engine::Registry& registry,
                                      const engine::AgentRecord& sender,
                                      const Envelope& envelope) const override {
    if (envelope.depth > -1) {
      return engine::access_denied("depth " + std::to_string(envelope.depth) +
                                   " over cap -1");
    }
    return RuleBasedArbiter::authorize_send(registry, sender, envelope);
  }
};

// Sends unknown audience ids to one agent instead.
struct Redirect : engine::RuleBasedArbiter {
  std::string to;
  std::optional<std::vector<std::string>> resolve_unknown_audience(
      const Envelope&, std::string_view) const override {
    return std::vector{to};
  }
};

TEST_CASE("LIM-12 a policy that denies every send refuses with its reason") {
  Pair p;
  p.t.set_options([](engine::HubOptions& options) {
    options.arbiter = std::make_shared<DenyAll>();
  });
  p.t.restart();
  check_denied(p.t.say(p.channel, p.alice, "hi"), "custom denial");
}

TEST_CASE("LIM-12 an allow-all policy overrides an inbound-blocking rule") {
  TestHub t;
  t.set_options([](engine::HubOptions& options) {
    options.arbiter = std::make_shared<engine::Arbiter>();
  });
  t.restart();
  const auto alice = t.add_agent("alice");
  Rule closed_door;
  closed_door.access.inbound_from = {"nobody"};
  const auto bob = t.add_agent("bob", {}, closed_door);
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  auto id = t.say(opened->channel_id, alice, "hi");
  REQUIRE(id.has_value());
  CHECK(texts(t.inbox(bob)) == std::vector{*id});
}

TEST_CASE("LIM-12 the rule-based default refuses what allow-all admits") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  Rule closed_door;
  closed_door.access.inbound_from = {"nobody"};
  const auto bob = t.add_agent("bob", {}, closed_door);
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().message ==
        "invitee 'bob' does not accept inbound from 'alice'");
}

TEST_CASE("LIM-12 a depth-based policy refuses with a message naming its cap") {
  Pair p;
  p.t.set_options([](engine::HubOptions& options) {
    options.arbiter = std::make_shared<DepthPolicy>();
  });
  p.t.restart();
  check_denied(p.t.say(p.channel, p.alice, "hi"), "cap");
}

TEST_CASE("LIM-12 a policy may resolve unknown audience ids") {
  Pair p;
  const auto carol = p.t.add_agent("carol");
  p.t.set_options([&](engine::HubOptions& options) {
    auto redirect = std::make_shared<Redirect>();
    redirect->to = carol;
    options.arbiter = redirect;
  });
  p.t.restart();
  auto id = p.t.say(p.channel, p.alice, "hi",
                    std::vector<std::string>{"remote:carol"});
  REQUIRE(id.has_value());
  CHECK(texts(p.t.inbox(carol)) == std::vector{*id});
}

TEST_CASE("LIM-13 burst 3 allows three immediate sends, then refuses") {
  Pair p(rate(60, 3));
  for (int i = 0; i < 3; ++i) {
    REQUIRE(p.t.say(p.channel, p.alice, "go").has_value());
  }
  const auto before = p.t.wal(p.channel).size();
  check_denied(p.t.say(p.channel, p.alice, "go"),
               "sender 'alice' exceeded rate limit (60/min, burst 3)");
  CHECK(p.t.wal(p.channel).size() == before);
}

TEST_CASE("LIM-13 60 per minute refills one token a second") {
  Pair p(rate(60, 1));
  REQUIRE(p.t.say(p.channel, p.alice, "first").has_value());
  check_denied(p.t.say(p.channel, p.alice, "too soon"), "rate limit");
  p.t.clock().advance(std::chrono::milliseconds(999));
  check_denied(p.t.say(p.channel, p.alice, "still too soon"), "rate limit");
  p.t.clock().advance(std::chrono::milliseconds(1));
  CHECK(p.t.say(p.channel, p.alice, "on time").has_value());
  check_denied(p.t.say(p.channel, p.alice, "again"), "rate limit");
}

TEST_CASE("LIM-13 refused posts spend no token") {
  Pair p(rate(60, 1));
  check_denied(p.t.say("no-such-channel", p.alice, "lost"), "channel not found",
               ErrorKind::kNotFound);
  CHECK(p.t.say(p.channel, p.alice, "first").has_value());
}

TEST_CASE(
    "LIM-13 changing the rule rebuilds the bucket, per_minute 0 "
    "disables") {
  Pair p(rate(60, 1));
  REQUIRE(p.t.say(p.channel, p.alice, "first").has_value());
  check_denied(p.t.say(p.channel, p.alice, "second"), "rate limit");
  REQUIRE(p.t.hub().set_rule(p.alice, rate(60, 2)).has_value());
  REQUIRE(p.t.say(p.channel, p.alice, "second").has_value());
  REQUIRE(p.t.say(p.channel, p.alice, "third").has_value());
  check_denied(p.t.say(p.channel, p.alice, "fourth"), "rate limit");
  REQUIRE(p.t.hub().set_rule(p.alice, rate(0, 2)).has_value());
  for (int i = 0; i < 10; ++i) {
    REQUIRE(p.t.say(p.channel, p.alice, "free").has_value());
  }
}

TEST_CASE("LIM-13 one sender's limit does not touch another sender") {
  Pair p(rate(60, 2));
  REQUIRE(p.t.say(p.channel, p.alice, "1").has_value());
  REQUIRE(p.t.say(p.channel, p.alice, "2").has_value());
  check_denied(p.t.say(p.channel, p.alice, "3"), "rate limit");
  for (int i = 0; i < 5; ++i) {
    REQUIRE(p.t.say(p.channel, p.bob, "free").has_value());
  }
}

TEST_CASE("LIM-13 the limit survives a restart, the bucket starts full") {
  Pair p(rate(60, 2));
  REQUIRE(p.t.say(p.channel, p.alice, "1").has_value());
  REQUIRE(p.t.say(p.channel, p.alice, "2").has_value());
  p.t.restart();
  REQUIRE(p.t.say(p.channel, p.alice, "3").has_value());
  REQUIRE(p.t.say(p.channel, p.alice, "4").has_value());
  check_denied(p.t.say(p.channel, p.alice, "5"), "rate limit");
}

TEST_CASE("LIM-13 the rate block round-trips through the rule") {
  TestHub t;
  const auto alice = t.add_agent("alice", {}, rate(30, 4));
  t.restart();
  auto rule = t.hub().get_rule(alice);
  REQUIRE(rule.has_value());
  CHECK(rule->limits.rate_per_minute == 30);
  CHECK(rule->limits.rate_burst == 4);
}

TEST_CASE("LIM-13 invite acks are not rate limited") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob", {}, rate(60, 1));
  REQUIRE(t.open(alice, "conversation", {bob}).has_value());
  auto second = t.open(alice, "conversation", {bob});
  REQUIRE(second.has_value());
  CHECK(t.say(second->channel_id, bob, "hello").has_value());
}

}  // namespace
}  // namespace parley

namespace parley {
namespace {

TEST_CASE("LIM-03 after a restart self and broadcasts stay exempt") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  REQUIRE(t.hub().set_rule(alice, outbound({"nobody"})).has_value());
  t.restart();
  CHECK(t.say(opened->channel_id, alice, "all").has_value());
  CHECK(t.say(opened->channel_id, alice, "me", std::vector{alice}).has_value());
  check_denied(t.say(opened->channel_id, alice, "bob", std::vector{bob}),
               "not permitted to send to 'bob'");
}

TEST_CASE("LIM-04 after a restart access still wins over a missing channel") {
  TestHub t;
  const auto alice = t.add_agent("alice", {}, outbound({"only-carol"}));
  const auto bob = t.add_agent("bob");
  t.restart();
  check_denied(t.say("no-such-channel", alice, "hi", std::vector{bob}),
               "not permitted to send to 'bob'");
}

TEST_CASE("LIM-08 after a restart protocol events still pass a full inbox") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob", {}, inbox(1));
  auto first = t.open(alice, "conversation", {bob});
  REQUIRE(first.has_value());
  t.restart();
  REQUIRE(t.say(first->channel_id, alice, "fill").has_value());
  check_denied(t.say(first->channel_id, alice, "more"), "inbox at capacity",
               ErrorKind::kInboxFull);
  auto second = t.open(alice, "conversation", {bob});
  REQUIRE(second.has_value());
  CHECK(second->state == engine::ChannelState::kActive);
}

TEST_CASE("LIM-10 the high-water rule survives a restart") {
  auto listener = std::make_shared<PressureListener>();
  TestHub t;
  t.set_options([&](engine::HubOptions& options) {
    options.listeners.push_back(listener);
  });
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob", {}, inbox(10, 2));
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  t.restart();
  REQUIRE(t.say(opened->channel_id, alice, "1").has_value());
  CHECK(listener->events.empty());
  REQUIRE(t.say(opened->channel_id, alice, "2").has_value());
  REQUIRE(listener->events.size() == 1);
  CHECK(listener->events[0] ==
        std::tuple{bob, std::int64_t{2}, std::int64_t{10}});
}

TEST_CASE("LIM-11 after a restart unknown audience ids are still dropped") {
  Pair p;
  p.t.restart();
  auto id = p.t.say(p.channel, p.alice, "hi",
                    std::vector<std::string>{"ghost-id", p.bob});
  REQUIRE(id.has_value());
  CHECK(texts(p.t.inbox(p.bob)).back() == *id);
}

}  // namespace
}  // namespace parley
