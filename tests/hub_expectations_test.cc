// Expectations through the whole hub (EXP-*): the tick, the built-in handlers,
// dedup across ticks and restarts, the audit record (AUDIT-05), and the
// auto_close route of RACE-06.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "engine/adapters/builtin_adapters.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "log/memory_log_store.h"
#include "tests/expectation_support.h"
#include "tests/hub_fixture.h"
#include "tools/script_runner.h"

namespace parley {
namespace {

using engine::ChannelState;
using engine::ExpectationSpec;
using nlohmann::json;
using testing::ExpectingAdapter;
using testing::RecordingHandler;
using testing::TestHub;

std::shared_ptr<const engine::ChannelAdapter> builtin(std::string_view type) {
  for (auto& adapter : engine::builtin_adapters()) {
    if (adapter->manifest().type == type) return adapter;
  }
  FAIL("no built-in adapter " << type);
  return nullptr;
}

// A conversation under `type` with only `expectations`.
std::shared_ptr<const engine::ChannelAdapter> conversation_with(
    std::string type, std::vector<ExpectationSpec> expectations) {
  return std::make_shared<ExpectingAdapter>(
      builtin("conversation"), std::move(type), std::move(expectations));
}

ExpectationSpec expect(std::string name, std::string handler, double seconds) {
  return {.name = std::move(name),
          .on_violation = std::move(handler),
          .params = json{{"seconds", seconds}}.dump()};
}

void advance(TestHub& t, double seconds) {
  t.clock().advance(std::chrono::microseconds(
      static_cast<std::int64_t>(seconds * 1'000'000)));
}

std::size_t tick(TestHub& t) {
  auto fired = t.hub().tick_expectations();
  REQUIRE_MESSAGE(fired.has_value(), testing::error_message(fired));
  return *fired;
}

std::vector<json> audits_of(TestHub& t, std::string_view kind) {
  std::vector<json> out;
  for (auto& record : t.audit()) {
    if (record["kind"] == kind) out.push_back(std::move(record));
  }
  return out;
}

std::vector<engine::Envelope> of_type(const std::vector<engine::Envelope>& wal,
                                      std::string_view type) {
  std::vector<engine::Envelope> out;
  for (const auto& envelope : wal) {
    if (envelope.event_type == type) out.push_back(envelope);
  }
  return out;
}

// create_channel on another thread, for channels that stay pending (silent
// invitees); the hub must wait for acks long enough (`hold_handshakes`).
std::future<engine::Result<engine::ChannelMetadata>> open_pending(
    TestHub& t, const std::string& creator, const std::string& type,
    std::vector<std::string> participants) {
  return std::async(std::launch::async, [&t, creator, type, participants] {
    return t.open(creator, type, participants);
  });
}

void hold_handshakes(
    TestHub& t,
    std::vector<std::shared_ptr<const engine::ChannelAdapter>> adapters = {},
    std::vector<std::shared_ptr<const engine::ExpectationHandler>> handlers =
        {}) {
  t.set_adapters(std::move(adapters));
  t.set_options([handlers](engine::HubOptions& options) {
    options.invite_ack_timeout = std::chrono::seconds(300);
    options.expectation_handlers = handlers;
  });
  t.restart();
}

// The pending channel's id once its invite is durable: a batch is folded
// (the channel lists as pending) before the log has written it (read_wal
// shows it).
std::string await_pending(TestHub& t) {
  for (int i = 0; i < 2000; ++i) {
    auto pending = t.hub().list_channels(std::nullopt, ChannelState::kPending);
    if (!pending.empty() && !t.wal(pending.front().channel_id).empty()) {
      return pending.front().channel_id;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  FAIL("no channel became pending");
  return {};
}

TEST_CASE("EXP-06 auto_close on an unacked consulting invite") {
  TestHub t;
  hold_handshakes(t);
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  t.set_invitee(bob, TestHub::Invitee::kSilent);
  auto opening = open_pending(t, alice, "consulting", {bob});
  const std::string id = await_pending(t);
  advance(t, 45);
  const auto started = std::chrono::steady_clock::now();
  CHECK(tick(t) == 1);
  // RACE-06: the pending open is released at once, not after 300 s.
  REQUIRE(opening.wait_for(std::chrono::seconds(10)) ==
          std::future_status::ready);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  auto opened = opening.get();
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().kind == engine::ErrorKind::kProtocol);
  CHECK(opened.error().message ==
        "channel '" + id +
            "' closed during handshake: expectation_violated:acks_within");
  auto channel = t.hub().get_channel(id);
  CHECK(channel->state == ChannelState::kClosed);
  CHECK(channel->close_reason == "expectation_violated:acks_within");
  CHECK(t.hub().list_channels(std::nullopt, std::nullopt).size() == 1);
  auto violations = audits_of(t, "expectation_violated");
  REQUIRE(violations.size() == 1);
  CHECK(violations[0]["expectation"] == "acks_within");
  CHECK(violations[0]["violators"] == json::array({bob}));
}

TEST_CASE("EXP-07 audit handler records only") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const auto before = t.audit().size();
  const auto wal_before = t.wal(channel->channel_id).size();
  advance(t, 3700);
  CHECK(tick(t) == 1);
  CHECK(t.hub().get_channel(channel->channel_id)->state ==
        ChannelState::kActive);
  CHECK(t.wal(channel->channel_id).size() == wal_before);
  CHECK(of_type(t.wal(channel->channel_id),
                engine::event_type::kExpectationViolated)
            .empty());
  auto records = t.audit();
  REQUIRE(records.size() == before + 1);
  CHECK(records.back()["kind"] == "expectation_violated");
  CHECK(records.back()["expectation"] == "max_silence");
}

TEST_CASE("EXP-08 notify_channel posts a violation envelope") {
  TestHub t({conversation_with("notify2",
                               {expect("max_silence", "notify_channel", 60)})});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "notify2", {bob});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  advance(t, 120);
  CHECK(tick(t) == 1);
  auto notices = of_type(t.wal(id), engine::event_type::kExpectationViolated);
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].sender_id == alice);
  CHECK_FALSE(notices[0].audience.has_value());
  CHECK(engine::flex_to_json(notices[0].event_data) ==
        json{{"expectation", "max_silence"},
             {"violators", json::array()},
             {"detail",
              {{"elapsed_seconds", 120.0}, {"threshold_seconds", 60.0}}}});
  CHECK(t.hub().get_channel(id)->state == ChannelState::kActive);
  CHECK(audits_of(t, "expectation_violated").size() == 1);
  // Broadcast: bob receives it, the creator does not.
  CHECK(
      of_type(t.inbox(bob), engine::event_type::kExpectationViolated).size() ==
      1);
  CHECK(of_type(t.inbox(alice), engine::event_type::kExpectationViolated)
            .empty());
}

TEST_CASE("EXP-09 a violation fires once per channel lifetime") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  REQUIRE(t.open(alice, "conversation", {bob}).has_value());
  advance(t, 3601);
  CHECK(tick(t) == 1);
  advance(t, 10);
  CHECK(tick(t) == 0);
  advance(t, 4000);
  CHECK(tick(t) == 0);
  CHECK(audits_of(t, "expectation_violated").size() == 1);
}

TEST_CASE("EXP-10 same-named expectations are distinct") {
  auto warn = std::make_shared<RecordingHandler>("warn");
  auto audit2 = std::make_shared<RecordingHandler>("audit2");
  TestHub t;
  hold_handshakes(
      t,
      {conversation_with("twice", {expect("acks_within", "warn", 30),
                                   expect("acks_within", "audit2", 60)})},
      {warn, audit2});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  t.set_invitee(bob, TestHub::Invitee::kSilent);
  auto opening = open_pending(t, alice, "twice", {bob});
  const std::string id = await_pending(t);
  advance(t, 35);
  CHECK(tick(t) == 1);
  CHECK(warn->calls() ==
        std::vector<std::pair<std::size_t, std::string>>{{0, bob}});
  CHECK(audit2->calls().empty());
  advance(t, 30);
  CHECK(tick(t) == 1);
  CHECK(warn->calls().size() == 1);
  CHECK(audit2->calls() ==
        std::vector<std::pair<std::size_t, std::string>>{{1, bob}});
  REQUIRE(t.hub().close_channel(id).has_value());
  CHECK_FALSE(opening.get().has_value());
}

TEST_CASE("EXP-10 same-named expectations with one threshold fire once each") {
  auto warn = std::make_shared<RecordingHandler>("warn");
  auto audit2 = std::make_shared<RecordingHandler>("audit2");
  TestHub t;
  hold_handshakes(
      t,
      {conversation_with("same", {expect("acks_within", "warn", 30),
                                  expect("acks_within", "audit2", 30)})},
      {warn, audit2});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  t.set_invitee(bob, TestHub::Invitee::kSilent);
  auto opening = open_pending(t, alice, "same", {bob});
  const std::string id = await_pending(t);
  advance(t, 45);
  CHECK(tick(t) == 2);
  CHECK(tick(t) == 0);
  CHECK(warn->calls().size() == 1);
  CHECK(audit2->calls().size() == 1);
  CHECK(audits_of(t, "expectation_violated").size() == 2);
  REQUIRE(t.hub().close_channel(id).has_value());
  CHECK_FALSE(opening.get().has_value());
}

TEST_CASE("EXP-12 unknown evaluator or handler names are skipped") {
  TestHub t({conversation_with("ghosts",
                               {expect("nonexistent_evaluator", "audit", 1),
                                expect("max_silence", "ghost_handler", 60)})});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "ghosts", {bob});
  REQUIRE(channel.has_value());
  const auto wal_before = t.wal(channel->channel_id).size();
  advance(t, 4000);
  CHECK(tick(t) == 0);
  CHECK(audits_of(t, "expectation_violated").empty());
  CHECK(t.wal(channel->channel_id).size() == wal_before);
  CHECK(t.hub().get_channel(channel->channel_id)->state ==
        ChannelState::kActive);
}

TEST_CASE("EXP-12 a hub without evaluators or handlers ticks as a no-op") {
  TestHub t;
  t.set_options([](engine::HubOptions& options) {
    options.register_default_adapters = false;
    options.adapters = {
        conversation_with("quiet", {expect("max_silence", "audit", 1)})};
  });
  t.restart();
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  REQUIRE(t.open(alice, "quiet", {bob}).has_value());
  advance(t, 100);
  CHECK(tick(t) == 0);
  CHECK(audits_of(t, "expectation_violated").empty());
}

// Fires once the channel's log holds `count` text envelopes, read through
// the context's read_wal.
class TextsLogged final : public engine::ExpectationEvaluator {
 public:
  explicit TextsLogged(std::size_t count) : count_(count) {}
  std::string_view name() const override { return "texts_logged"; }
  std::optional<engine::Violation> evaluate(
      const engine::ExpectationContext& context,
      const ExpectationSpec&) const override {
    auto wal = context.read_wal();
    if (!wal) throw std::runtime_error(wal.error().message);
    const auto texts = of_type(*wal, engine::event_type::kText).size();
    if (texts < count_) return std::nullopt;
    return engine::Violation{{}, json{{"texts", texts}}.dump()};
  }

 private:
  std::size_t count_;
};

TEST_CASE("a custom evaluator reads the channel's log through read_wal") {
  TestHub t(
      {conversation_with("counted", {expect("texts_logged", "audit", 0)})});
  t.set_options([](engine::HubOptions& options) {
    options.expectation_evaluators = {std::make_shared<TextsLogged>(2)};
  });
  t.restart();
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "counted", {bob});
  REQUIRE(channel.has_value());
  REQUIRE(t.say(channel->channel_id, alice, "one").has_value());
  CHECK(tick(t) == 0);
  REQUIRE(t.say(channel->channel_id, bob, "two").has_value());
  CHECK(tick(t) == 1);
  auto violations = audits_of(t, "expectation_violated");
  REQUIRE(violations.size() == 1);
  CHECK(violations[0]["detail"] == json{{"texts", 2}});
}

TEST_CASE("EXP-13 auto_close in one channel does not starve others") {
  TestHub t({conversation_with("closing",
                               {expect("max_silence", "auto_close", 60)})});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  const auto dave = t.add_agent("dave");
  auto first = t.open(alice, "closing", {bob});
  auto second = t.open(carol, "closing", {dave});
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  advance(t, 120);
  CHECK(tick(t) == 2);
  for (const auto& id : {first->channel_id, second->channel_id}) {
    auto channel = t.hub().get_channel(id);
    CHECK(channel->state == ChannelState::kClosed);
    CHECK(channel->close_reason == "expectation_violated:max_silence");
  }
  CHECK(audits_of(t, "channel_closed").size() == 2);
  CHECK(audits_of(t, "expectation_violated").size() == 2);
}

TEST_CASE(
    "AUDIT-05 violation record fields, written before the handler's effects") {
  TestHub t({conversation_with("closing",
                               {expect("max_silence", "auto_close", 60)})});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "closing", {bob});
  REQUIRE(channel.has_value());
  advance(t, 90);
  CHECK(tick(t) == 1);
  auto records = t.audit();
  REQUIRE(records.size() >= 2);
  const json& violation = records[records.size() - 2];
  CHECK(violation ==
        json{{"at", "2026-01-01T00:01:30+00:00"},
             {"kind", "expectation_violated"},
             {"channel_id", channel->channel_id},
             {"expectation", "max_silence"},
             {"on_violation", "auto_close"},
             {"params", {{"seconds", 60.0}}},
             {"violators", json::array()},
             {"detail",
              {{"elapsed_seconds", 90.0}, {"threshold_seconds", 60.0}}}});
  CHECK(records.back()["kind"] == "channel_closed");
}

TEST_CASE("AUDIT-05 the no-op audit handler still writes the record") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  advance(t, 3600);
  CHECK(tick(t) == 1);
  auto violations = audits_of(t, "expectation_violated");
  REQUIRE(violations.size() == 1);
  for (const char* field : {"at", "channel_id", "expectation", "on_violation",
                            "params", "violators", "detail"}) {
    CHECK_MESSAGE(violations[0].contains(field), field);
  }
  CHECK(violations[0]["on_violation"] == "audit");
  CHECK(violations[0]["params"] == json{{"seconds", 3600}});
}

TEST_CASE(
    "max_silence ticks: one tick before the threshold nothing, at it one "
    "firing") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  REQUIRE(t.open(alice, "conversation", {bob}).has_value());
  advance(t, 3599.999999);
  CHECK(tick(t) == 0);
  advance(t, 0.000001);
  CHECK(tick(t) == 1);
}

TEST_CASE(
    "consulting reply_within 600 s: one tick before nothing, at it "
    "auto_close") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "consulting", {bob});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  REQUIRE(t.say(id, alice, "What is 6 x 7?", std::vector{bob}).has_value());
  advance(t, 599);
  CHECK(tick(t) == 0);
  CHECK(t.hub().get_channel(id)->state == ChannelState::kActive);
  advance(t, 1);
  CHECK(tick(t) == 1);
  auto closed = t.hub().get_channel(id);
  CHECK(closed->state == ChannelState::kClosed);
  CHECK(closed->close_reason == "expectation_violated:reply_within");
  CHECK(t.wal_types(id).back() == engine::event_type::kChannelClosed);
  auto violations = audits_of(t, "expectation_violated");
  REQUIRE(violations.size() == 1);
  CHECK(violations[0]["violators"] == json::array({bob}));
}

TEST_CASE("a fired expectation does not fire again after a restart") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  REQUIRE(t.open(alice, "conversation", {bob}).has_value());
  advance(t, 3700);
  CHECK(tick(t) == 1);
  t.restart();
  CHECK(tick(t) == 0);
  advance(t, 3700);
  CHECK(tick(t) == 0);
  CHECK(audits_of(t, "expectation_violated").size() == 1);
}

TEST_CASE("a restart between the threshold and the tick fires once") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  advance(t, 1800);
  CHECK(tick(t) == 0);
  t.restart();
  advance(t, 1800);
  CHECK(tick(t) == 1);
  t.restart();
  CHECK(tick(t) == 0);
  CHECK(audits_of(t, "expectation_violated").size() == 1);
}

TEST_CASE(
    "discussion defaults: turn_within warns every participant, then hides the "
    "silent one") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  auto channel = t.open(alice, "discussion", {bob, carol});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  REQUIRE(t.say(id, alice, "opening").has_value());
  advance(t, 119);
  CHECK(tick(t) == 0);
  advance(t, 1);
  CHECK(tick(t) == 1);
  auto warnings = of_type(t.wal(id), engine::event_type::kExpectationViolated);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].audience ==
        std::optional(std::vector<std::string>{alice, bob, carol}));
  CHECK(engine::flex_to_json(warnings[0].event_data)["violators"] ==
        json::array({bob}));
  CHECK(engine::flex_to_json(warnings[0].event_data)["expectation"] ==
        "turn_within");
  for (const auto& agent : {alice, bob, carol}) {
    CHECK(of_type(t.inbox(agent), engine::event_type::kExpectationViolated)
              .size() == 1);
  }
  CHECK(t.state(id)["expected_next_speaker"] == bob);
  advance(t, 479);
  CHECK(tick(t) == 0);
  advance(t, 1);
  CHECK(tick(t) == 1);  // 600 s: bob is hidden, the turn passes to carol
  CHECK(t.state(id)["expected_next_speaker"] == carol);
  CHECK(t.state(id)["hidden_participants"] == json::array({bob}));
  CHECK(t.hub().get_channel(id)->state == ChannelState::kActive);
  // The turn moved just now: carol's clock starts at the hide.
  CHECK(tick(t) == 0);
  auto refused = t.say(id, bob, "late");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == engine::ErrorKind::kProtocol);
  REQUIRE(t.say(id, carol, "carol here").has_value());
  REQUIRE(t.say(id, alice, "alice again").has_value());
  CHECK(t.state(id)["expected_next_speaker"] == carol);
  // Hiding is folded from the log: it survives a restart.
  t.restart();
  CHECK(t.state(id)["expected_next_speaker"] == carol);
  CHECK(t.state(id)["hidden_participants"] == json::array({bob}));
  CHECK(tick(t) == 0);
}

TEST_CASE(
    "turn_within auto_close (the workflow default) closes a stalled turn") {
  TestHub t({std::make_shared<ExpectingAdapter>(
      builtin("discussion"), "stalling",
      std::vector{expect("turn_within", "auto_close", 600)})});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "stalling", {bob});
  REQUIRE(channel.has_value());
  advance(t, 600);
  CHECK(tick(t) == 1);
  auto closed = t.hub().get_channel(channel->channel_id);
  CHECK(closed->state == ChannelState::kClosed);
  CHECK(closed->close_reason == "expectation_violated:turn_within");
  CHECK(audits_of(t, "expectation_violated")[0]["violators"] ==
        json::array({alice}));
}

TEST_CASE(
    "workflow defaults: turn_within warns at 120 s and auto-closes at 600 s") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  const json graph{
      {"initial_speaker", alice},
      {"transitions",
       json::array(
           {{{"when", {{"name", "always"}, {"args", json::object()}}},
             {"then", {{"name", "round_robin"}, {"args", json::object()}}},
             {"priority", 0}}})},
      {"default_target", nullptr},
      {"max_turns", 10}};
  auto channel = t.open(alice, "workflow", {bob, carol}, {{"graph", graph}});
  REQUIRE_MESSAGE(channel.has_value(), testing::error_message(channel));
  const auto& id = channel->channel_id;
  REQUIRE(t.say(id, alice, "step one").has_value());
  REQUIRE(t.state(id)["expected_next_speaker"] == bob);
  advance(t, 120);
  CHECK(tick(t) == 1);
  auto warnings = of_type(t.wal(id), engine::event_type::kExpectationViolated);
  REQUIRE(warnings.size() == 1);
  CHECK(engine::flex_to_json(warnings[0].event_data)["violators"] ==
        json::array({bob}));
  advance(t, 479.999999);
  CHECK(tick(t) == 0);
  advance(t, 0.000001);
  CHECK(tick(t) == 1);
  auto closed = t.hub().get_channel(id);
  CHECK(closed->state == ChannelState::kClosed);
  CHECK(closed->close_reason == "expectation_violated:turn_within");
}

TEST_CASE(
    "a handler that throws is reported, the firing is still logged and the "
    "tick goes on") {
  struct Throwing final : engine::ExpectationHandler {
    std::string_view name() const override { return "explode"; }
    void handle(const engine::FiredExpectation&,
                engine::HandlerEffects&) const override {
      throw std::runtime_error("boom");
    }
  };
  TestHub t({conversation_with("fragile",
                               {expect("max_silence", "explode", 10),
                                expect("max_silence", "auto_close", 10)})});
  t.set_options([](engine::HubOptions& options) {
    options.expectation_handlers = {std::make_shared<Throwing>()};
  });
  t.restart();
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "fragile", {bob});
  REQUIRE(channel.has_value());
  advance(t, 20);
  CHECK(tick(t) == 2);
  CHECK(audits_of(t, "expectation_violated").size() == 2);
  CHECK(t.hub().get_channel(channel->channel_id)->state ==
        ChannelState::kClosed);
}

TEST_CASE("listeners hear of every firing after it is durable") {
  struct Heard final : engine::HubListener {
    void on_expectation_fired(std::string_view channel_id,
                              const json& expectation,
                              const json& violation) override {
      fired.push_back({{"channel_id", channel_id},
                       {"expectation", expectation},
                       {"violation", violation}});
    }
    std::vector<json> fired;
  };
  auto heard = std::make_shared<Heard>();
  TestHub t;
  t.set_options([heard](engine::HubOptions& options) {
    options.listeners.push_back(heard);
  });
  t.restart();
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  advance(t, 3600);
  CHECK(tick(t) == 1);
  REQUIRE(heard->fired.size() == 1);
  CHECK(heard->fired[0]["channel_id"] == channel->channel_id);
  CHECK(heard->fired[0]["expectation"]["name"] == "max_silence");
  CHECK(heard->fired[0]["expectation"]["on_violation"] == "audit");
  CHECK(heard->fired[0]["violation"]["violators"] == json::array());
}

TEST_CASE("the control plane's tick_expectations op runs one tick") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  REQUIRE(t.open(alice, "conversation", {bob}).has_value());
  advance(t, 3600);
  auto ticked = t.ops().call("tick_expectations", json::object());
  REQUIRE(ticked.has_value());
  CHECK(*ticked == json{{"fired", 1}});
  auto refused = t.ops().call("tick_expectations", json{{"extra", 1}});
  CHECK_FALSE(refused.has_value());
}

TEST_CASE("parley exec: the sweep op runs the expectation tick") {
  auto runner = engine::ScriptRunner::start(
      []() -> engine::Result<std::shared_ptr<log::LogStore>> {
        return std::shared_ptr<log::LogStore>(log::make_memory_log_store());
      });
  REQUIRE(runner.has_value());
  auto& script = **runner;
  auto run = [&](const json& line) {
    auto out = script.run_line(line.dump());
    REQUIRE(out.has_value());
    return json::parse(*out);
  };
  run({{"op", "register"},
       {"params",
        {{"passport", {{"name", "alice"}}}, {"resume", json::object()}}},
       {"as", "alice"}});
  run({{"op", "register"},
       {"params",
        {{"passport", {{"name", "bob"}}}, {"resume", json::object()}}},
       {"as", "bob"}});
  run({{"op", "create_channel"},
       {"params",
        {{"creator_id", "$alice"},
         {"manifest_type", "consulting"},
         {"participants", {"$bob"}}}},
       {"as", "c1"}});
  run({{"op", "post_envelope"},
       {"params",
        {{"envelope",
          {{"channel_id", "$c1"},
           {"sender_id", "$alice"},
           {"audience", {"$bob"}},
           {"event_type", "ag2.msg.text"},
           {"event_data", {{"text", "hi"}}}}}}}});
  run({{"op", "clock.advance"}, {"params", {{"seconds", 600}}}});
  CHECK(run({{"op", "sweep"}})["ok"] == true);
  auto state = run({{"op", "state"}, {"params", {{"channel_id", "$c1"}}}});
  CHECK(state["result"]["metadata"]["state"] == "closed");
  CHECK(state["result"]["metadata"]["close_reason"] ==
        "expectation_violated:reply_within");
}

}  // namespace
}  // namespace parley

namespace parley {
namespace {

TEST_CASE("notify_channel on a pending channel audits but posts nothing") {
  TestHub t;
  hold_handshakes(
      t, {conversation_with("quiet_invite",
                            {expect("acks_within", "notify_channel", 30)})});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  t.set_invitee(bob, TestHub::Invitee::kSilent);
  auto opening = open_pending(t, alice, "quiet_invite", {bob});
  const std::string id = await_pending(t);
  const auto wal_before = t.wal(id).size();
  advance(t, 30);
  CHECK(tick(t) == 1);
  CHECK(t.wal(id).size() == wal_before);
  CHECK(audits_of(t, "expectation_violated").size() == 1);
  CHECK(t.hub().get_channel(id)->state == ChannelState::kPending);
  REQUIRE(t.hub().close_channel(id).has_value());
  CHECK_FALSE(opening.get().has_value());
}

TEST_CASE("concurrent ticks fire each key once") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  for (int i = 0; i < 5; ++i) {
    REQUIRE(t.open(alice, "conversation", {bob}).has_value());
  }
  advance(t, 3600);
  std::atomic<std::size_t> fired = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      auto ticked = t.hub().tick_expectations();
      if (ticked) fired += *ticked;
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(fired == 5);
  CHECK(audits_of(t, "expectation_violated").size() == 5);
}

}  // namespace
}  // namespace parley
