// Listeners, the audit log and health (scenarios AUDIT-01, 02, 06, 09, 10).
#include <doctest/doctest.h>

#include <atomic>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "log/forwarding_log_store.h"
#include "log/memory_log_store.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using engine::Envelope;
using nlohmann::json;
using testing::TestHub;

// Records every event as one line: "<event> <detail>".
struct Recorder : engine::HubListener {
  std::mutex mutex;
  std::vector<std::string> events;
  std::vector<json> payloads;

  void add(std::string line, json payload = nullptr) {
    std::lock_guard lock(mutex);
    events.push_back(std::move(line));
    payloads.push_back(std::move(payload));
  }
  void on_envelope_posted(const Envelope& envelope,
                          const engine::ChannelMetadata& metadata) override {
    add("posted " + envelope.event_type,
        {{"channel_id", metadata.channel_id},
         {"state", engine::to_string(metadata.state)}});
  }
  void on_envelope_rejected(const Envelope& envelope,
                            const engine::Error& error) override {
    add("rejected " + envelope.event_type, error.message);
  }
  void on_dispatch_failed(const Envelope& envelope,
                          std::string_view recipient_id,
                          std::string_view error) override {
    add("dispatch_failed " + envelope.event_type,
        {{"recipient_id", recipient_id}, {"error", error}});
  }
  void on_channel_event(std::string_view, std::string_view kind,
                        const json& payload) override {
    add("channel " + std::string(kind), payload);
  }
  void on_agent_event(std::string_view, std::string_view kind,
                      const json& payload) override {
    add("agent " + std::string(kind), payload);
  }
  void on_turn_failed(std::string_view, std::string_view agent_id,
                      std::string_view, std::string_view error) override {
    add("turn_failed", {{"agent_id", agent_id}, {"error", error}});
  }
};

struct Throwing : engine::HubListener {
  void on_envelope_posted(const Envelope&,
                          const engine::ChannelMetadata&) override {
    throw std::runtime_error("bad listener");
  }
  void on_agent_event(std::string_view, std::string_view,
                      const json&) override {
    throw 42;
  }
};

// A hub whose listeners are `listeners`, at every start.
struct Observed {
  TestHub t;
  std::shared_ptr<Recorder> recorder = std::make_shared<Recorder>();

  explicit Observed(
      std::vector<std::shared_ptr<engine::HubListener>> extra = {}) {
    extra.push_back(recorder);
    t.set_options(
        [extra](engine::HubOptions& options) { options.listeners = extra; });
    t.restart();
  }
};

TEST_CASE("AUDIT-01 register and unregister are audited in order") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  REQUIRE(t.hub().unregister(alice).has_value());
  t.restart();
  const auto audit = t.audit();
  REQUIRE(audit.size() == 2);
  CHECK(audit[0]["kind"] == "agent_registered");
  CHECK(audit[0]["agent_id"] == alice);
  CHECK(audit[0]["name"] == "alice");
  CHECK(audit[1]["kind"] == "agent_unregistered");
  CHECK(audit[1]["agent_id"] == alice);
  CHECK(audit[1]["name"] == "alice");
  CHECK(audit[0].contains("at"));
}

TEST_CASE("AUDIT-02 mutations are audited with source, version and outcome") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  engine::Resume resume;
  resume.summary = "analyst";
  REQUIRE(t.hub().set_resume(alice, resume).has_value());
  REQUIRE(t.hub().set_skill(alice, "# alice").has_value());
  REQUIRE(t.hub().set_rule(alice, {}).has_value());
  REQUIRE(t.hub()
              .record_observation(alice, "analysis", "completed", 42.0,
                                  std::nullopt)
              .has_value());
  t.restart();
  const auto audit = t.audit();
  REQUIRE(audit.size() == 5);
  CHECK(audit[1]["kind"] == "resume_set");
  CHECK(audit[1]["source"] == "tenant");
  CHECK(audit[1]["version"] == 2);
  CHECK(audit[2]["kind"] == "skill_set");
  CHECK(audit[2]["removed"] == false);
  CHECK(audit[3]["kind"] == "rule_set");
  CHECK(audit[3]["version"] == 2);
  CHECK(audit[4]["kind"] == "resume_set");
  CHECK(audit[4]["source"] == "observed");
  CHECK(audit[4]["agent_id"] == alice);
  CHECK(audit[4]["capability"] == "analysis");
  CHECK(audit[4]["outcome"] == "completed");
}

TEST_CASE("AUDIT-06 tenant audit records round-trip in order, keys sorted") {
  TestHub t;
  REQUIRE(t.hub()
              .append_audit(
                  R"({"n": 1, "kind": "test", "at": "2026-01-01T00:00:00"})")
              .has_value());
  REQUIRE(t.hub()
              .append_audit(
                  R"({"n": 2, "kind": "test", "at": "2026-01-01T00:00:01"})")
              .has_value());
  t.restart();
  auto records = t.hub().read_audit();
  REQUIRE(records.has_value());
  REQUIRE(records->size() == 2);
  CHECK((*records)[0] == R"({"at":"2026-01-01T00:00:00","kind":"test","n":1})");
  CHECK((*records)[1] == R"({"at":"2026-01-01T00:00:01","kind":"test","n":2})");
}

TEST_CASE("AUDIT-06 a malformed audit record is refused and writes nothing") {
  TestHub t;
  for (std::string_view bad :
       {"[1]", "{\"kind\": \"x\"}", "{\"at\": \"t\", \"kind\": 3}", "not json",
        "{\"at\": \"t\", \"kind\": \"x\", \"k\\u0000\": 1}"}) {
    auto refused = t.hub().append_audit(bad);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().kind == engine::ErrorKind::kInvalid);
  }
  CHECK(t.audit().empty());
  CHECK(t.hub().store().last_sequence() == 0);
}

TEST_CASE("AUDIT-06 audit records through the control plane") {
  TestHub t;
  REQUIRE(
      t.ops()
          .call("append_audit",
                {{"record",
                  {{"at", "2026-01-01T00:00:00"}, {"kind", "test"}, {"n", 1}}}})
          .has_value());
  auto read = t.ops().call("read_audit", json::object());
  REQUIRE(read.has_value());
  CHECK(*read ==
        json::array(
            {{{"at", "2026-01-01T00:00:00"}, {"kind", "test"}, {"n", 1}}}));
}

TEST_CASE(
    "AUDIT-09 observers see agent, channel and envelope events in "
    "order") {
  Observed o;
  const auto alice = o.t.add_agent("alice");
  const auto bob = o.t.add_agent("bob");
  auto opened = o.t.open(alice, "consulting", {bob});
  REQUIRE(opened.has_value());
  const auto& channel = opened->channel_id;
  REQUIRE(o.t.say(channel, alice, "question?").has_value());
  REQUIRE(o.t.say(channel, bob, "answer.").has_value());
  CHECK(o.recorder->events == std::vector<std::string>{
                                  "agent registered",
                                  "agent registered",
                                  "channel created",
                                  // bob acks inside the invite's delivery:
                                  // the ack's changes are told first
                                  "channel opened",
                                  "posted ag2.channel.opened",
                                  "posted ag2.channel.invite",
                                  "posted ag2.msg.text",
                                  "posted ag2.msg.text",
                                  "channel closed",
                              });
  const json& created = o.recorder->payloads[2];
  CHECK(created["participants"] == json::array({alice, bob}));
  CHECK(created["metadata"]["channel_id"] == channel);
  CHECK(created["at"] == "2026-01-01T00:00:00+00:00");
  const json& closed = o.recorder->payloads.back();
  CHECK(closed["reason"] == "consulting_complete");
  CHECK(closed["metadata"]["state"] == "closed");
  CHECK(o.recorder->payloads[3]["metadata"]["state"] == "active");
  CHECK(o.recorder->payloads[0]["passport"]["name"] == "alice");
}

TEST_CASE(
    "AUDIT-09 a post is told after its deliveries, before the close it "
    "causes") {
  TestHub t;
  std::vector<std::string> order;
  std::mutex mutex;
  struct Log : engine::HubListener {
    std::vector<std::string>* order;
    std::mutex* mutex;
    void on_envelope_posted(const Envelope& envelope,
                            const engine::ChannelMetadata&) override {
      std::lock_guard lock(*mutex);
      order->push_back("posted " + envelope.event_type);
    }
    void on_channel_event(std::string_view, std::string_view kind,
                          const json&) override {
      std::lock_guard lock(*mutex);
      order->push_back("channel " + std::string(kind));
    }
  };
  auto listener = std::make_shared<Log>();
  listener->order = &order;
  listener->mutex = &mutex;
  t.set_options([listener](engine::HubOptions& options) {
    options.listeners = {listener};
  });
  t.restart();
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto opened = t.open(alice, "consulting", {bob});
  REQUIRE(opened.has_value());
  REQUIRE(t.say(opened->channel_id, alice, "q").has_value());
  t.hub().subscribe(alice,
                    [&](const std::string&,
                        const std::shared_ptr<const Envelope>& delivered) {
                      const Envelope& envelope = *delivered;
                      std::lock_guard lock(mutex);
                      order.push_back("delivered " + envelope.event_type);
                    });
  order.clear();
  REQUIRE(t.say(opened->channel_id, bob, "a").has_value());
  CHECK(order == std::vector<std::string>{
                     "delivered ag2.msg.text", "posted ag2.msg.text",
                     "delivered ag2.channel.closed", "channel closed"});
}

TEST_CASE("AUDIT-09 refused posts and unregistration are observed") {
  Observed o;
  engine::Rule narrow;
  narrow.access.outbound_to = {"carol"};
  const auto alice = o.t.add_agent("alice");
  const auto bob = o.t.add_agent("bob");
  auto opened = o.t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  REQUIRE(o.t.hub().set_rule(alice, narrow).has_value());
  REQUIRE_FALSE(
      o.t.say(opened->channel_id, alice, "hi", std::vector{bob}).has_value());
  REQUIRE(o.t.hub().unregister(bob).has_value());
  REQUIRE(o.t.hub()
              .report_turn_failure(opened->channel_id, alice, "e", "boom")
              .has_value());
  const auto& events = o.recorder->events;
  REQUIRE(events.size() >= 4);
  CHECK(events[events.size() - 4] == "agent rule_set");
  CHECK(events[events.size() - 3] == "rejected ag2.msg.text");
  CHECK(o.recorder->payloads[events.size() - 3] ==
        "sender 'alice' not permitted to send to 'bob'");
  CHECK(events[events.size() - 2] == "agent unregistered");
  CHECK(o.recorder->payloads[events.size() - 2]["name"] == "bob");
  CHECK(events.back() == "turn_failed");
}

TEST_CASE(
    "AUDIT-09 limit refusals are observed, an idempotent retry tells "
    "nothing") {
  Observed o;
  engine::Rule limited;
  limited.limits.rate_per_minute = 60;
  limited.limits.rate_burst = 2;
  const auto alice = o.t.add_agent("alice", {}, limited);
  engine::Rule small;
  small.limits.inbox_max_pending = 1;
  const auto bob = o.t.add_agent("bob", {}, small);
  auto opened = o.t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  auto keyed = [&](std::string_view text) {
    Envelope envelope;
    envelope.channel_id = opened->channel_id;
    envelope.sender_id = alice;
    envelope.event_type = std::string(engine::event_type::kText);
    envelope.event_data = engine::to_flex(json{{"text", text}}).value();
    envelope.idempotency_key = "k";
    return o.t.hub().post_envelope(std::move(envelope));
  };
  REQUIRE(keyed("one").has_value());
  const auto told = o.recorder->events.size();
  REQUIRE(keyed("one").has_value());
  CHECK(o.recorder->events.size() == told);
  REQUIRE_FALSE(keyed("other").has_value());
  REQUIRE_FALSE(o.t.say(opened->channel_id, alice, "full").has_value());
  o.t.hub().unsubscribe(bob);
  REQUIRE(o.t.say(opened->channel_id, bob, "drain").has_value());
  REQUIRE(o.t.say(opened->channel_id, alice, "two").has_value());
  REQUIRE_FALSE(o.t.say(opened->channel_id, alice, "three").has_value());
  std::vector<std::string> rejections;
  for (std::size_t i = told; i < o.recorder->events.size(); ++i) {
    if (o.recorder->events[i] == "rejected ag2.msg.text") {
      rejections.push_back(o.recorder->payloads[i].get<std::string>());
    }
  }
  REQUIRE(rejections.size() == 3);
  CHECK(rejections[0].starts_with("idempotency key 'k' was already used"));
  CHECK(rejections[1] == "recipient '" + bob + "' inbox at capacity (1 >= 1)");
  CHECK(rejections[2] ==
        "sender 'alice' exceeded rate limit (60/min, burst 2)");
}

TEST_CASE("AUDIT-09 hydrate tells the listeners nothing") {
  Observed o;
  const auto alice = o.t.add_agent("alice");
  const auto bob = o.t.add_agent("bob");
  REQUIRE(o.t.open(alice, "conversation", {bob}).has_value());
  o.recorder->events.clear();
  o.t.restart();
  CHECK(o.recorder->events.empty());
}

TEST_CASE("AUDIT-10 failing observers do not break the send or the others") {
  auto bad = [] { return std::make_shared<Throwing>(); };
  TestHub t;
  auto good = std::make_shared<Recorder>();
  t.set_options([&](engine::HubOptions& options) {
    options.listeners = {bad(), bad(), good, bad()};
  });
  t.restart();
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  auto sent = t.say(opened->channel_id, alice, "hi");
  REQUIRE(sent.has_value());
  CHECK(good->events.back() == "posted ag2.msg.text");
  CHECK(t.wal(opened->channel_id).back().envelope_id == *sent);
  CHECK_FALSE(t.inbox(bob).empty());
}

TEST_CASE("a subscriber that throws fails only its own delivery") {
  Observed o;
  const auto alice = o.t.add_agent("alice");
  const auto bob = o.t.add_agent("bob");
  const auto carol = o.t.add_agent("carol");
  auto opened = o.t.open(alice, "discussion", {bob, carol});
  REQUIRE(opened.has_value());
  o.t.hub().subscribe(
      bob, [](const std::string&, const std::shared_ptr<const Envelope>&) {
        throw std::runtime_error("socket gone");
      });
  REQUIRE(o.t.say(opened->channel_id, alice, "hi").has_value());
  const auto& events = o.recorder->events;
  CHECK(std::ranges::find(events, "dispatch_failed ag2.msg.text") !=
        events.end());
  CHECK(o.t.inbox(carol).back().event_type == engine::event_type::kText);
}

TEST_CASE("every recipient is handed the one envelope the log took") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  auto opened = t.open(alice, "discussion", {bob, carol});
  REQUIRE(opened.has_value());
  std::mutex mutex;
  std::vector<std::shared_ptr<const Envelope>> handed;
  for (const auto& agent : {bob, carol}) {
    t.hub().subscribe(agent,
                      [&](const std::string&,
                          const std::shared_ptr<const Envelope>& envelope) {
                        std::lock_guard lock(mutex);
                        handed.push_back(envelope);
                      });
  }
  auto sent = t.say(opened->channel_id, alice, "hi");
  REQUIRE(sent.has_value());
  REQUIRE(handed.size() == 2);
  // Shared, not copied per recipient, and as sequenced by the log.
  CHECK(handed[0] == handed[1]);
  CHECK(handed[0]->envelope_id == *sent);
  CHECK(handed[0]->sequence == t.wal(opened->channel_id).back().sequence);
}

TEST_CASE("health reports AG2's fields and Parley's") {
  Observed o;
  const auto alice = o.t.add_agent("alice");
  const auto bob = o.t.add_agent("bob");
  auto opened = o.t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  REQUIRE(o.t.say(opened->channel_id, alice, "one").has_value());
  REQUIRE(o.t.say(opened->channel_id, alice, "two").has_value());
  auto second = o.t.open(alice, "conversation", {bob});
  REQUIRE(second.has_value());
  REQUIRE(o.t.hub().close_channel(second->channel_id).has_value());
  const engine::HubHealth health = o.t.hub().health();
  CHECK(health.active_channels == 1);
  CHECK(health.registered_agents == 2);
  CHECK(health.pending_inbox_total == 2);
  CHECK(health.max_pending_inbox_depth == 2);
  CHECK(health.registered_listeners == 1);
  CHECK(health.adapters_loaded == 4);
  CHECK(health.audit_log_bytes > 0);
  CHECK(health.channels_by_state.at("active") == 1);
  CHECK(health.channels_by_state.at("closed") == 1);
  CHECK(health.channels_by_state.at("pending") == 0);
  CHECK(health.pending_inbox.at(bob) == 2);
  CHECK(health.log_sequence == o.t.hub().store().last_sequence());
  CHECK_FALSE(health.failure.has_value());
  CHECK_FALSE(health.closed);

  auto json_health = o.t.ops().call("health", json::object());
  REQUIRE(json_health.has_value());
  CHECK((*json_health)["active_channels"] == 1);
  CHECK((*json_health)["max_pending_inbox_depth"] == 2);
  CHECK((*json_health)["channels_by_state"]["closed"] == 1);
  CHECK((*json_health)["failure"].is_null());
  for (const char* key :
       {"registered_agents", "pending_inbox_total", "registered_listeners",
        "adapters_loaded", "audit_log_bytes", "pending_inbox", "log_sequence",
        "closed"}) {
    CHECK_MESSAGE(json_health->contains(key), key);
  }
}

TEST_CASE("health after restart: counters reset, audit bytes start over") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto opened = t.open(alice, "conversation", {bob});
  REQUIRE(opened.has_value());
  REQUIRE(t.say(opened->channel_id, alice, "one").has_value());
  t.restart();
  const auto health = t.hub().health();
  CHECK(health.pending_inbox_total == 0);
  CHECK_FALSE(health.max_pending_inbox_depth.has_value());
  CHECK(health.audit_log_bytes == 0);
  CHECK(health.registered_agents == 2);
  CHECK(health.active_channels == 1);
}

// A memory store whose appends, once `fail` is set, sequence the batch and
// then report an I/O error, as a failed sync does; while `refuse` is set
// they are refused before sequencing, as on a full disk.
class FailingStore : public log::ForwardingLogStore {
 public:
  std::atomic<bool> fail = false;
  std::atomic<bool> refuse = false;

  FailingStore() : ForwardingLogStore(log::make_memory_log_store()) {}

  log::Result<std::vector<log::Position>> append(
      std::span<log::AppendEntry> batch,
      const SequencedCallback& on_sequenced) override {
    if (refuse) {
      return std::unexpected(
          log::Error{log::ErrorCode::kNoSpace, "injected no_space"});
    }
    auto appended = store_->append(batch, on_sequenced);
    if (appended && fail) {
      return std::unexpected(
          log::Error{log::ErrorCode::kIoError, "injected sync failure"});
    }
    return appended;
  }
  // Through append() above, as a store without a group commit does.
  log::Result<void> append_deferred(std::span<log::AppendEntry> batch,
                                    DurableCallback on_durable) override {
    return LogStore::append_deferred(batch, std::move(on_durable));
  }
};

TEST_CASE("health reports a hub that stopped after a failed log write") {
  auto store = std::make_shared<FailingStore>();
  auto opened = engine::Hub::open({.store = store});
  REQUIRE(opened.has_value());
  engine::Hub& hub = **opened;
  REQUIRE(hub.register_identity({.name = "alice"}, {}, {}, {}).has_value());
  CHECK_FALSE(hub.health().failure.has_value());
  store->fail = true;
  CHECK_FALSE(hub.register_identity({.name = "bob"}, {}, {}, {}).has_value());
  const auto health = hub.health();
  REQUIRE(health.failure.has_value());
  CHECK(health.failure->find("injected sync failure") != std::string::npos);
  CHECK(engine::to_json(health)["failure"] == *health.failure);
  REQUIRE(hub.close().has_value());
  CHECK(hub.health().closed);
}

// A hub on a FailingStore with alice and bob (who acks invites and counts
// the other deliveries) in an active conversation.
struct FailingStoreHub {
  std::shared_ptr<FailingStore> store = std::make_shared<FailingStore>();
  std::unique_ptr<engine::Hub> hub;
  std::string alice;
  std::string bob;
  std::string channel;
  std::atomic<int> delivered = 0;

  explicit FailingStoreHub(std::optional<engine::Rule> alice_rule = {}) {
    auto opened = engine::Hub::open({.store = store});
    REQUIRE(opened.has_value());
    hub = std::move(*opened);
    auto registered =
        hub->register_identity({.name = "alice"}, {}, {}, alice_rule);
    REQUIRE(registered.has_value());
    alice = *registered->agent_id;
    registered = hub->register_identity({.name = "bob"}, {}, {}, {});
    REQUIRE(registered.has_value());
    bob = *registered->agent_id;
    hub->subscribe(
        bob, [this](const std::string&,
                    const std::shared_ptr<const engine::Envelope>& envelope) {
          const engine::Envelope& e = *envelope;
          if (e.event_type != engine::event_type::kChannelInvite) {
            ++delivered;
            return;
          }
          engine::Envelope ack;
          ack.channel_id = e.channel_id;
          ack.sender_id = bob;
          ack.event_type = std::string(engine::event_type::kChannelInviteAck);
          ack.event_data =
              engine::to_flex(nlohmann::json{{"channel_id", e.channel_id}})
                  .value();
          (void)hub->post_envelope(std::move(ack));
        });
    auto created = hub->create_channel({.creator_id = alice,
                                        .manifest_type = "conversation",
                                        .participants = {bob}});
    REQUIRE(created.has_value());
    channel = created->channel_id;
  }

  engine::Result<std::string> say(std::string_view text) {
    engine::Envelope envelope;
    envelope.channel_id = channel;
    envelope.sender_id = alice;
    envelope.event_type = std::string(engine::event_type::kText);
    envelope.event_data =
        engine::to_flex(nlohmann::json{{"text", text}}).value();
    return hub->post_envelope(std::move(envelope));
  }
};

TEST_CASE("a failed log write fails every concurrent post and stops the hub") {
  FailingStoreHub f;
  const int delivered_before = f.delivered;
  f.store->fail = true;
  std::latch start(8);
  std::vector<std::jthread> posters;
  for (int i = 0; i < 8; ++i) {
    posters.emplace_back([&, i] {
      start.arrive_and_wait();
      auto posted = f.say(std::to_string(i));
      CHECK_FALSE(posted.has_value());
      if (!posted) CHECK(posted.error().kind == engine::ErrorKind::kStorage);
    });
  }
  posters.clear();  // joins
  CHECK(f.delivered == delivered_before);
  const auto health = f.hub->health();
  REQUIRE(health.failure.has_value());
  CHECK(health.failure->find("injected sync failure") != std::string::npos);
}

TEST_CASE("a post the log refuses spends no rate token") {
  engine::Rule one_a_minute;
  one_a_minute.limits.rate_per_minute = 1;
  one_a_minute.limits.rate_burst = 1;
  FailingStoreHub f(one_a_minute);
  f.store->refuse = true;
  auto refused = f.say("refused");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == engine::ErrorKind::kStorage);
  CHECK(refused.error().message.find("injected no_space") != std::string::npos);
  f.store->refuse = false;
  auto posted = f.say("the one post of this minute");
  REQUIRE_MESSAGE(posted.has_value(), testing::error_message(posted));
  auto limited = f.say("over the limit");
  REQUIRE_FALSE(limited.has_value());
  CHECK(limited.error().kind == engine::ErrorKind::kAccessDenied);
  CHECK_FALSE(f.hub->health().failure.has_value());
}

}  // namespace
}  // namespace parley
