// Channel lifecycle and the handshake (CHAN-*) through the hub's C++ API and,
// for JSON shapes and wire codes, the control-plane op layer. CHAN-17 (the
// duration grammar) is pinned in registry_rules_test.
//
// The fixture's invitees answer their invite inside the delivery, on the
// creating thread, before create_channel waits (its ack timeout is 0 ms).
// A test that needs a channel still `pending` replaces an invitee's
// subscription and acts from inside that delivery.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include "engine/adapters/channel_adapter.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/base/ids.h"
#include "engine/json/records_json.h"
#include "log/rocksdb_log_store.h"
#include "tests/hub_fixture.h"
#include "tests/test_support.h"

namespace parley {
namespace {

using engine::ChannelMetadata;
using engine::ChannelState;
using engine::Envelope;
using engine::ErrorKind;
using nlohmann::json;
using testing::TestHub;
namespace ev = engine::event_type;

constexpr std::string_view kT0 = "2026-01-01T00:00:00+00:00";

template <typename T>
engine::Error error_of(const engine::Result<T>& result) {
  REQUIRE_FALSE(result.has_value());
  return result.error();
}

json data_of(const Envelope& envelope) {
  return engine::flex_to_json(envelope.event_data);
}

std::vector<std::string> ids_of(const ChannelMetadata& metadata) {
  std::vector<std::string> out;
  for (const auto& participant : metadata.participants) {
    out.push_back(participant.agent_id);
  }
  return out;
}

std::vector<std::string> types_of(const std::vector<Envelope>& envelopes) {
  std::vector<std::string> out;
  for (const auto& envelope : envelopes) out.push_back(envelope.event_type);
  return out;
}

// Audit records about `channel_id`, in log order.
std::vector<json> channel_audit(TestHub& t, std::string_view channel_id) {
  std::vector<json> out;
  for (auto& record : t.audit()) {
    if (record.value("channel_id", "") == channel_id) {
      out.push_back(std::move(record));
    }
  }
  return out;
}

// The only channel of the hub (for refused opens, which return no id).
ChannelMetadata only_channel(TestHub& t) {
  auto listed = t.hub().list_channels(std::nullopt, std::nullopt);
  REQUIRE(listed.size() == 1);
  return listed[0];
}

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

TEST_CASE("CHAN-02 participant roles and order are assigned at creation") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");

  auto pair = t.open(alice, "conversation", {bob});
  REQUIRE(pair.has_value());
  REQUIRE(pair->participants.size() == 2);
  CHECK(pair->participants[0].agent_id == alice);  // prepended
  CHECK(pair->participants[0].role == "initiator");
  CHECK(pair->participants[0].order == 0);
  CHECK(pair->participants[1].agent_id == bob);
  CHECK(pair->participants[1].role == "respondent");
  CHECK(pair->participants[1].order == 1);

  auto trio = t.open(alice, "discussion", {bob, carol});
  REQUIRE(trio.has_value());
  CHECK(ids_of(*trio) == std::vector<std::string>{alice, bob, carol});
  CHECK(trio->participants[0].role == "initiator");
  for (std::size_t i = 1; i < 3; ++i) {
    CHECK(trio->participants[i].role == "participant");
    CHECK(trio->participants[i].order == static_cast<std::int64_t>(i));
  }
  for (const auto& participant : trio->participants) {
    CHECK(participant.joined_at == trio->created_at);
  }
}

TEST_CASE("CHAN-02 a creator listed among the participants keeps its place") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  auto channel = t.open(alice, "discussion", {bob, alice, carol});
  REQUIRE(channel.has_value());
  CHECK(ids_of(*channel) == std::vector<std::string>{bob, alice, carol});
  CHECK(channel->participants[1].role == "initiator");
  CHECK(channel->participants[1].order == 1);
  CHECK(channel->participants[0].role == "participant");
  CHECK(channel->pending_acks.empty());
}

TEST_CASE("CHAN-03 multi-party handshake counts") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  std::vector<std::string> others;
  for (auto name : {"bob", "carol", "dave", "erin"}) {
    others.push_back(t.add_agent(name));
  }
  auto channel = t.open(alice, "discussion", others);
  REQUIRE(channel.has_value());
  CHECK(channel->state == ChannelState::kActive);
  CHECK(channel->pending_acks.empty());
  CHECK(channel->rejected_by.empty());
  CHECK(channel->participants.size() == 5);

  const auto wal = t.wal(channel->channel_id);
  std::vector<std::string> invited, acked;
  std::size_t last_ack = 0, opened_at = 0, opened = 0;
  for (std::size_t i = 0; i < wal.size(); ++i) {
    const Envelope& envelope = wal[i];
    if (envelope.event_type == ev::kChannelInvite) {
      REQUIRE(envelope.audience.has_value());
      REQUIRE(envelope.audience->size() == 1);
      invited.push_back(envelope.audience->front());
    } else if (envelope.event_type == ev::kChannelInviteAck) {
      acked.push_back(envelope.sender_id);
      last_ack = i;
    } else if (envelope.event_type == ev::kChannelOpened) {
      ++opened;
      opened_at = i;
    }
  }
  CHECK(wal.size() == 9);
  CHECK(invited == others);  // one per invitee, in participant order
  CHECK(std::set(acked.begin(), acked.end()) ==
        std::set(others.begin(), others.end()));
  CHECK(acked.size() == 4);
  CHECK(opened == 1);
  CHECK(opened_at > last_ack);
}

TEST_CASE("CHAN-04 invite, opened and closed envelope shapes") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.hub().create_channel({.creator_id = alice,
                                         .manifest_type = "consulting",
                                         .participants = {bob},
                                         .knobs = R"({"capability":"math"})",
                                         .intent = "research",
                                         .labels = R"({"team":"blue"})"});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  CHECK(json::parse(channel->labels) ==
        json{{"team", "blue"}, {"intent", "research"}});
  REQUIRE(t.hub().close_channel(id, "done").has_value());

  const auto wal = t.wal(id);
  REQUIRE(types_of(wal) == std::vector<std::string>{
                               "ag2.channel.invite", "ag2.channel.invite.ack",
                               "ag2.channel.opened", "ag2.channel.closed"});
  const std::vector<std::string> everyone{alice, bob};

  const Envelope& invite = wal[0];
  CHECK(invite.sender_id == alice);
  CHECK(invite.audience == std::vector<std::string>{bob});
  CHECK(data_of(invite) ==
        json{{"channel_id", id},
             {"manifest_type", "consulting"},
             {"manifest_version", 1},
             {"creator_id", alice},
             {"knobs", {{"capability", "math"}}},
             {"labels", {{"team", "blue"}, {"intent", "research"}}}});

  const Envelope& ack = wal[1];
  CHECK(ack.sender_id == bob);
  CHECK(ack.causation_id == invite.envelope_id);

  const Envelope& opened = wal[2];
  CHECK(opened.sender_id == alice);
  CHECK(opened.audience == everyone);  // the creator included
  CHECK(data_of(opened) == json{{"channel_id", id}});

  const Envelope& closed = wal[3];
  CHECK(closed.sender_id == alice);
  CHECK(closed.audience == everyone);
  CHECK(data_of(closed) == json{{"reason", "done"}, {"channel_id", id}});
  CHECK(data_of(closed)["reason"] == t.hub().get_channel(id)->close_reason);

  for (const Envelope& envelope : wal) {
    CHECK(engine::has_id_shape(envelope.envelope_id));
    CHECK(envelope.created_at == kT0);
  }
}

TEST_CASE("CHAN-04 lifecycle envelopes have exactly AG2's keys on the wire") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  REQUIRE(t.hub().close_channel(channel->channel_id).has_value());
  auto read = t.ops().call("read_wal", {{"channel_id", channel->channel_id}});
  REQUIRE(read.has_value());
  REQUIRE(read->size() == 4);
  const std::set<std::string> ag2_keys{
      "audience",        "causation_id", "channel_id", "created_at",
      "depth",           "envelope_id",  "event_data", "event_type",
      "idempotency_key", "priority",     "sender_id",  "task_id",
      "trace_id",        "ttl_seconds"};
  for (const json& envelope : *read) {
    std::set<std::string> keys;
    for (const auto& [key, value] : envelope.items()) keys.insert(key);
    CHECK(keys == ag2_keys);
  }
  CHECK((*read)[3]["event_data"] == json{{"reason", "explicit_close"},
                                         {"channel_id", channel->channel_id}});
}

TEST_CASE("CHAN-05 a missing ack times the open out") {
  TestHub t;  // invite ack timeout: 0 ms
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  t.set_invitee(bob, TestHub::Invitee::kSilent);
  auto opened = t.open(alice, "consulting", {bob});
  const auto channel = only_channel(t);
  const auto error = error_of(opened);
  CHECK(error.kind == ErrorKind::kProtocol);
  CHECK(error.message == "channel '" + channel.channel_id + "' ack timeout");
  CHECK(channel.state == ChannelState::kClosed);
  CHECK(channel.close_reason == "invite_timeout");
  CHECK(channel.pending_acks == std::vector<std::string>{bob});
  CHECK(t.wal_types(channel.channel_id) ==
        std::vector<std::string>{"ag2.channel.invite", "ag2.channel.closed"});
  // Both sides hear about the close.
  CHECK(types_of(t.inbox(alice)) ==
        std::vector<std::string>{"ag2.channel.closed"});
  CHECK(types_of(t.inbox(bob)) ==
        std::vector<std::string>{"ag2.channel.invite", "ag2.channel.closed"});
  const auto audited = channel_audit(t, channel.channel_id);
  REQUIRE(audited.size() == 2);
  CHECK(audited[0]["kind"] == "channel_created");
  CHECK(audited[1]["kind"] == "channel_closed");
  CHECK(audited[1]["reason"] == "invite_timeout");
}

TEST_CASE(
    "CHAN-06 the creator's error names the handshake, acks and rejects "
    "reach nobody") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  t.set_invitee(carol, TestHub::Invitee::kReject);
  auto opened = t.open(alice, "discussion", {bob, carol});
  const auto channel = only_channel(t);
  CHECK(error_of(opened).message ==
        "channel '" + channel.channel_id +
            "' closed during handshake: invite_rejected");

  const auto wal = t.wal(channel.channel_id);
  REQUIRE(types_of(wal) == std::vector<std::string>{"ag2.channel.invite",
                                                    "ag2.channel.invite",
                                                    "ag2.channel.invite.ack",
                                                    "ag2.channel.invite.reject",
                                                    "ag2.channel.closed"});
  CHECK(wal[3].sender_id == carol);
  CHECK(wal[3].causation_id == wal[1].envelope_id);
  CHECK(data_of(wal[3])["reason"] == "not interested");
  CHECK(data_of(wal[4])["reason"] == "invite_rejected");
  // Acks and rejects are logged, never delivered.
  for (const auto& agent : {alice, bob, carol}) {
    for (const auto& envelope : t.inbox(agent)) {
      CHECK(envelope.event_type != ev::kChannelInviteAck);
      CHECK(envelope.event_type != ev::kChannelInviteReject);
    }
  }
  CHECK(types_of(t.inbox(alice)) ==
        std::vector<std::string>{"ag2.channel.closed"});
}

TEST_CASE("CHAN-07 creation input validation persists nothing") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  const auto before = t.hub().store().last_sequence();
  auto refused = [&](engine::Result<ChannelMetadata> result, ErrorKind kind,
                     const std::string& message) {
    const auto error = error_of(result);
    CHECK(error.kind == kind);
    CHECK(error.message == message);
    CHECK(t.hub().list_channels(std::nullopt, std::nullopt).empty());
    CHECK(t.hub().store().last_sequence() == before);
  };
  refused(t.open(alice, "conversation", {"0123456789abcdef0123456789abcdef"}),
          ErrorKind::kNotFound,
          "participant not registered: 0123456789abcdef0123456789abcdef");
  refused(t.open(alice, "discussion", {bob, bob}), ErrorKind::kProtocol,
          "participant listed twice: '" + bob + "'");
  refused(t.open(alice, "conversation", {}), ErrorKind::kProtocol,
          "channel requires at least one participant");
  refused(t.open(alice, "nonexistent", {bob}), ErrorKind::kNotFound,
          "no adapter registered for 'nonexistent'@v1");
  refused(t.open("ghost", "conversation", {bob}), ErrorKind::kNotFound,
          "creator not registered: ghost");
  // The adapter's own validate_create refusal persists nothing either.
  refused(t.open(alice, "consulting", {bob, carol}), ErrorKind::kProtocol,
          "consulting requires exactly one respondent");  // roles: participant
}

TEST_CASE("CHAN-07 creation errors carry AG2's wire codes") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto code = [&](json participants, std::string type) {
    auto result =
        t.ops().call("create_channel", {{"creator_id", alice},
                                        {"manifest_type", type},
                                        {"participants", participants}});
    return std::string(engine::wire_code(error_of(result).kind));
  };
  CHECK(code(json{"ghost"}, "conversation") == "not_found");
  CHECK(code(json{bob, bob}, "conversation") == "protocol_error");
  CHECK(code(json::array(), "conversation") == "protocol_error");
  CHECK(code(json{bob}, "nonexistent") == "not_found");
}

TEST_CASE("CHAN-09 the creator's concurrent-channel cap") {
  TestHub t;
  engine::Rule capped;
  capped.limits.max_concurrent_channels = 2;
  const auto alice = t.add_agent("alice", {}, capped);
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  const auto dave = t.add_agent("dave");

  // A channel alice only takes part in does not count against her.
  REQUIRE(t.open(bob, "conversation", {alice}).has_value());
  auto first = t.open(alice, "conversation", {bob});
  REQUIRE(first.has_value());
  REQUIRE(t.open(alice, "conversation", {carol}).has_value());
  const auto before = t.hub().store().last_sequence();
  auto third = t.open(alice, "conversation", {dave});
  const auto error = error_of(third);
  CHECK(error.kind == ErrorKind::kAccessDenied);
  CHECK(error.message ==
        "creator '" + alice + "' exceeded max_concurrent_channels (2 >= 2)");
  CHECK(t.hub().store().last_sequence() == before);
  CHECK(t.hub().list_channels(std::nullopt, std::nullopt).size() == 3);

  REQUIRE(t.hub().close_channel(first->channel_id).has_value());
  CHECK(t.open(alice, "conversation", {dave}).has_value());
}

TEST_CASE("CHAN-09 a cap of 0 is unlimited") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  CHECK(t.hub().get_rule(alice)->limits.max_concurrent_channels == 0);
  const auto bob = t.add_agent("bob");
  for (int i = 0; i < 5; ++i) {
    REQUIRE(t.open(alice, "conversation", {bob}).has_value());
  }
  CHECK(t.hub().list_channels(alice, std::nullopt).size() == 5);
}

TEST_CASE("CHAN-10 explicit close") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  t.clock().advance(std::chrono::minutes(5));

  auto closed = t.hub().close_channel(id, "done");
  REQUIRE(closed.has_value());
  CHECK(closed->state == ChannelState::kClosed);
  CHECK(closed->close_reason == "done");
  CHECK(closed->closed_at == "2026-01-01T00:05:00+00:00");
  CHECK(engine::to_json(*t.hub().get_channel(id)) == engine::to_json(*closed));

  const auto wal = t.wal(id);
  CHECK(wal.back().event_type == ev::kChannelClosed);
  CHECK(data_of(wal.back())["reason"] == "done");
  for (const auto& agent : {alice, bob}) {
    CHECK(t.inbox(agent).back().envelope_id == wal.back().envelope_id);
  }

  const auto audited = channel_audit(t, id);
  REQUIRE(audited.size() == 2);
  CHECK(audited[0] == json{{"at", kT0},
                           {"kind", "channel_created"},
                           {"channel_id", id},
                           {"manifest_type", "conversation"},
                           {"manifest_version", 1},
                           {"creator_id", alice},
                           {"participants", {alice, bob}}});
  CHECK(audited[1] == json{{"at", "2026-01-01T00:05:00+00:00"},
                           {"kind", "channel_closed"},
                           {"channel_id", id},
                           {"reason", "done"}});

  const auto late = error_of(t.say(id, bob, "too late"));
  CHECK(late.kind == ErrorKind::kProtocol);
  CHECK(late.message == "channel '" + id + "' is closed");
  const auto late_protocol = error_of(t.post(id, bob, "ag2.task.progress", {}));
  CHECK(late_protocol.message == "channel '" + id + "' is closed");
}

TEST_CASE("CHAN-11 close defaults to explicit_close and is idempotent") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  auto first = t.hub().close_channel(id);
  REQUIRE(first.has_value());
  CHECK(first->close_reason == "explicit_close");
  const auto wal_size = t.wal(id).size();
  const auto audit_size = t.audit().size();

  t.clock().advance(std::chrono::minutes(1));
  auto again = t.hub().close_channel(id, "other");
  REQUIRE(again.has_value());
  CHECK(engine::to_json(*again) == engine::to_json(*first));
  CHECK(t.wal(id).size() == wal_size);
  CHECK(t.audit().size() == audit_size);
  CHECK(t.hub().get_channel(id)->close_reason == "explicit_close");
}

TEST_CASE("CHAN-11 closing an unknown channel is a bare key error") {
  TestHub t;
  const auto error = error_of(t.hub().close_channel("nope"));
  CHECK(error.kind == ErrorKind::kInvalid);
  CHECK(engine::wire_code(error.kind) == "error");
}

TEST_CASE("CHAN-12 posting to an unknown channel") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto error = error_of(t.say("nope", alice, "hi"));
  CHECK(error.kind == ErrorKind::kNotFound);
  CHECK(error.message == "channel not found: nope");
  auto op =
      t.ops().call("post_envelope", {{"envelope",
                                      {{"channel_id", "nope"},
                                       {"sender_id", alice},
                                       {"audience", nullptr},
                                       {"event_type", "ag2.msg.text"},
                                       {"event_data", {{"text", "hi"}}}}}});
  CHECK(engine::wire_code(error_of(op).kind) == "not_found");
}

TEST_CASE("CHAN-13 posting as an unknown or unregistered sender") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const auto ghost = error_of(t.say(channel->channel_id, "ghost", "boo"));
  CHECK(ghost.kind == ErrorKind::kNotFound);
  CHECK(ghost.message == "sender not registered: ghost");
  // The sender check precedes every other check (here: channel lookup).
  CHECK(error_of(t.say("nope", "ghost", "boo")).message ==
        "sender not registered: ghost");

  REQUIRE(t.hub().unregister(bob).has_value());
  const auto gone = error_of(t.say(channel->channel_id, bob, "hello?"));
  CHECK(gone.kind == ErrorKind::kNotFound);
  CHECK(gone.message == "sender not registered: " + bob);
}

TEST_CASE("CHAN-14 no substantive traffic before ACTIVE") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  std::optional<ChannelState> state_seen;
  std::optional<engine::Result<std::string>> text, task_event, ack;
  // bob reacts to the invite while the channel is still pending.
  t.hub().subscribe(bob, [&](const std::string&,
                             const std::shared_ptr<const Envelope>& delivered) {
    const Envelope& envelope = *delivered;
    if (envelope.event_type != ev::kChannelInvite) return;
    const auto& id = envelope.channel_id;
    state_seen = t.hub().get_channel(id)->state;
    text = t.say(id, alice, "too early");
    task_event = t.post(id, alice, "ag2.task.progress", {{"task_id", "t-1"}});
    ack = t.post(id, bob, ev::kChannelInviteAck, {{"channel_id", id}});
  });
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  CHECK(state_seen == ChannelState::kPending);
  REQUIRE(text.has_value());
  const auto refused = error_of(*text);
  CHECK(refused.kind == ErrorKind::kProtocol);
  CHECK(refused.message == "channel '" + id + "' not active (state=pending)");
  // Protocol events pass in pending; the ack completes the handshake.
  CHECK(task_event->has_value());
  CHECK(ack->has_value());
  CHECK(channel->state == ChannelState::kActive);
  CHECK(t.wal_types(id) == std::vector<std::string>{
                               "ag2.channel.invite", "ag2.task.progress",
                               "ag2.channel.invite.ack", "ag2.channel.opened"});
}

TEST_CASE("CHAN-15 TTL drives expires_at") {
  TestHub t;
  engine::Rule hourly;
  hourly.limits.channel_ttl_default = std::string("1h");
  const auto alice = t.add_agent("alice", {}, hourly);
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  auto expires = [&](const std::string& creator,
                     std::optional<engine::DurationSpec> ttl) {
    auto channel =
        t.open(creator, "conversation", {creator == alice ? bob : carol},
               json::object(), std::move(ttl));
    REQUIRE(channel.has_value());
    CHECK(channel->created_at == kT0);
    return channel->expires_at;
  };
  CHECK(expires(alice, std::nullopt) == "2026-01-01T01:00:00+00:00");
  CHECK(expires(alice, std::string("30m")) == "2026-01-01T00:30:00+00:00");
  CHECK(expires(bob, std::nullopt) == "2026-01-01T02:00:00+00:00");  // "2h"
  CHECK(expires(alice, std::int64_t{90}) == "2026-01-01T00:01:30+00:00");
  CHECK(expires(alice, std::string("0s")) == std::nullopt);
  CHECK(expires(alice, std::int64_t{0}) == std::nullopt);
  // AG2 reads a negative TTL as none; Parley refuses it and asks for 0.
  auto negative =
      t.open(alice, "conversation", {bob}, json::object(), std::int64_t{-5});
  REQUIRE_FALSE(negative.has_value());
  CHECK(negative.error().message ==
        "ttl must not be negative, got -5 seconds; 0 means no expiry");
}

TEST_CASE("CHAN-15 a malformed TTL refuses the open and persists nothing") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto before = t.hub().store().last_sequence();
  auto opened =
      t.open(alice, "conversation", {bob}, json::object(), std::string("1.5h"));
  CHECK(error_of(opened).kind == ErrorKind::kInvalid);
  CHECK(t.hub().store().last_sequence() == before);
}

TEST_CASE("CHAN-16 TTL expiry") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel =
      t.open(alice, "conversation", {bob}, json::object(), std::string("60s"));
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  const auto wal_size = t.wal(id).size();

  // Before expires_at a sweep changes nothing.
  t.clock().advance(std::chrono::seconds(59));
  REQUIRE(t.hub().expire_due().has_value());
  CHECK(t.hub().get_channel(id)->state == ChannelState::kActive);
  CHECK(t.wal(id).size() == wal_size);

  t.clock().advance(std::chrono::seconds(61));  // T0 + 120 s
  REQUIRE(t.hub().expire_due().has_value());
  const auto expired = *t.hub().get_channel(id);
  CHECK(expired.state == ChannelState::kExpired);
  CHECK(expired.close_reason == "ttl_expired");
  CHECK(expired.closed_at == "2026-01-01T00:02:00+00:00");

  const auto wal = t.wal(id);
  REQUIRE(wal.size() == wal_size + 1);
  CHECK(wal.back().event_type == ev::kChannelExpired);
  CHECK(data_of(wal.back()) ==
        json{{"reason", "ttl_expired"}, {"channel_id", id}});
  CHECK(wal.back().audience == std::vector<std::string>{alice, bob});
  for (const auto& agent : {alice, bob}) {  // the creator too
    CHECK(t.inbox(agent).back().event_type == ev::kChannelExpired);
  }

  const auto audited = channel_audit(t, id);
  REQUIRE(audited.size() == 2);
  CHECK(audited[1] == json{{"at", "2026-01-01T00:02:00+00:00"},
                           {"kind", "channel_expired"},
                           {"channel_id", id},
                           {"reason", "ttl_expired"}});

  // A later sweep finds nothing more to do.
  t.clock().advance(std::chrono::hours(1));
  REQUIRE(t.hub().expire_due().has_value());
  CHECK(t.wal(id).size() == wal_size + 1);
  CHECK(channel_audit(t, id).size() == 2);
}

TEST_CASE("CHAN-16 a channel expires at exactly expires_at") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel =
      t.open(alice, "conversation", {bob}, json::object(), std::string("60s"));
  REQUIRE(channel.has_value());
  t.clock().advance(std::chrono::seconds(60));
  REQUIRE(t.hub().expire_due().has_value());
  CHECK(t.hub().get_channel(channel->channel_id)->state ==
        ChannelState::kExpired);
}

TEST_CASE("CHAN-18 built-in channel types are present at start") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const json graph = {
      {"initial_speaker", alice},
      {"max_turns", 4},
      {"default_target",
       {{"name", "terminate"}, {"args", {{"reason", "round_robin_complete"}}}}},
      {"transitions",
       {{{"priority", 0},
         {"when", {{"name", "always"}, {"args", json::object()}}},
         {"then", {{"name", "round_robin"}, {"args", json::object()}}}}}}};
  for (auto item : {std::pair{"consulting", json::object()},
                    std::pair{"conversation", json::object()},
                    std::pair{"discussion", json::object()},
                    std::pair{"workflow", json{{"graph", graph}}}}) {
    // Not bindings: CAPTURE captures them, which clang 14 cannot.
    const char* type = item.first;
    const json& knobs = item.second;
    CAPTURE(type);
    auto channel = t.open(alice, type, {bob}, knobs);
    REQUIRE_MESSAGE(channel.has_value(), testing::error_message(channel));
    CHECK(channel->manifest.type == type);
    CHECK(channel->manifest.version == 1);
    auto v2 = t.hub().create_channel({.creator_id = alice,
                                      .manifest_type = type,
                                      .manifest_version = 2,
                                      .participants = {bob}});
    CHECK(error_of(v2).message ==
          "no adapter registered for '" + std::string(type) + "'@v2");
  }
}

TEST_CASE(
    "a participant's own ag2.channel.closed is logged and delivered but "
    "changes nothing") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  auto forged = t.post(id, bob, ev::kChannelClosed,
                       {{"reason", "forged"}, {"channel_id", id}});
  REQUIRE(forged.has_value());
  CHECK(t.inbox(alice).back().envelope_id == *forged);
  CHECK(t.wal(id).back().envelope_id == *forged);
  CHECK(t.hub().get_channel(id)->state == ChannelState::kActive);
  CHECK(t.hub().get_channel(id)->close_reason.empty());
  t.restart();  // the fold tells hub-authored envelopes apart
  CHECK(t.hub().get_channel(id)->state == ChannelState::kActive);
  CHECK(t.say(id, alice, "still here").has_value());
}

TEST_CASE("acks from someone not pending are logged and change nothing") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  std::vector<engine::Result<std::string>> extra;
  std::optional<ChannelMetadata> after_extra;
  t.set_invitee(carol, TestHub::Invitee::kSilent);
  t.hub().subscribe(
      carol, [&](const std::string&,
                 const std::shared_ptr<const Envelope>& delivered) {
        const Envelope& envelope = *delivered;
        if (envelope.event_type != ev::kChannelInvite) return;
        const auto& id = envelope.channel_id;
        // bob acked already; bob again and the creator are not pending.
        extra.push_back(t.post(id, bob, ev::kChannelInviteAck, {}));
        extra.push_back(t.post(id, alice, ev::kChannelInviteAck, {}));
        after_extra = *t.hub().get_channel(id);
        REQUIRE(t.post(id, carol, ev::kChannelInviteAck, {}).has_value());
      });
  auto channel = t.open(alice, "discussion", {bob, carol});
  REQUIRE(channel.has_value());
  REQUIRE(extra.size() == 2);
  CHECK(extra[0].has_value());
  CHECK(extra[1].has_value());
  REQUIRE(after_extra.has_value());
  CHECK(after_extra->state == ChannelState::kPending);
  CHECK(after_extra->pending_acks == std::vector<std::string>{carol});
  CHECK(channel->state == ChannelState::kActive);
  const auto types = t.wal_types(channel->channel_id);
  CHECK(std::count(types.begin(), types.end(), "ag2.channel.invite.ack") == 4);
  CHECK(std::count(types.begin(), types.end(), "ag2.channel.opened") == 1);
  CHECK(types.back() == "ag2.channel.opened");
}

// A custom channel type for CHAN-19: counts texts and closes itself with
// "tournament_over" at the third. `tag` lands in the manifest's
// default_view_policy, so a channel's snapshot shows which definition
// created it.
struct CountState final : engine::AdapterState {
  std::int64_t texts = 0;
  std::unique_ptr<engine::AdapterState> clone() const override {
    return std::make_unique<CountState>(*this);
  }
  engine::JsonText to_json() const override {
    return json{{"texts", texts}}.dump();
  }
};

class CountingAdapter final : public engine::ChannelAdapter {
 public:
  CountingAdapter(std::string type, std::string tag) {
    manifest_.type = std::move(type);
    manifest_.version = 1;
    manifest_.default_view_policy = std::move(tag);
  }
  const engine::ChannelManifest& manifest() const override { return manifest_; }
  engine::Result<std::unique_ptr<engine::AdapterState>> initial_state(
      const ChannelMetadata&) const override {
    return std::make_unique<CountState>();
  }
  void fold(const engine::EnvelopeView& envelope,
            engine::AdapterState& state) const override {
    if (envelope.event_type == ev::kText)
      ++static_cast<CountState&>(state).texts;
  }
  engine::Result<void> validate_create(
      const ChannelMetadata& metadata) const override {
    if (metadata.participants.size() < 2) {
      return engine::protocol_error("a tournament needs two players");
    }
    return {};
  }
  engine::Result<void> validate_send(
      const ChannelMetadata&, const engine::EnvelopeView&,
      const engine::AdapterState&) const override {
    return {};
  }
  engine::AcceptResult on_accepted(
      const ChannelMetadata&, const engine::EnvelopeView&,
      const engine::AdapterState& after) const override {
    if (static_cast<const CountState&>(after).texts >= 3) {
      return {ChannelState::kClosed, "tournament_over"};
    }
    return {};
  }
  std::optional<engine::ExpectedTurn> expected_next(
      const ChannelMetadata&, const engine::AdapterState&) const override {
    return std::nullopt;
  }

 private:
  engine::ChannelManifest manifest_;
};

TEST_CASE("CHAN-19 a custom channel type can be opened and governs it") {
  TestHub t({std::make_shared<CountingAdapter>("tournament", "bracket")});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  auto channel = t.open(alice, "tournament", {bob, carol});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  CHECK(channel->state == ChannelState::kActive);
  CHECK(channel->manifest.type == "tournament");
  CHECK(channel->manifest.default_view_policy == "bracket");
  for (const auto& who : {alice, bob, carol}) {
    REQUIRE(t.say(id, who, "move").has_value());
  }
  CHECK(t.state(id) == json{{"texts", 3}});
  CHECK(t.hub().get_channel(id)->close_reason == "tournament_over");
  CHECK(t.wal_types(id).back() == "ag2.channel.closed");
  t.restart();
  CHECK(t.state(id) == json{{"texts", 3}});
  CHECK(error_of(t.open(alice, "tournament", {})).message ==
        "channel requires at least one participant");
}

TEST_CASE("CHAN-19 registering a (type, version) again replaces it") {
  TestHub t({std::make_shared<CountingAdapter>("tournament", "first"),
             std::make_shared<CountingAdapter>("tournament", "second"),
             std::make_shared<CountingAdapter>("consulting", "custom")});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  auto tournament = t.open(alice, "tournament", {bob});
  REQUIRE(tournament.has_value());
  CHECK(tournament->manifest.default_view_policy == "second");
  // A built-in can be replaced too: this "consulting" takes three.
  auto consulting = t.open(alice, "consulting", {bob, carol});
  REQUIRE_MESSAGE(consulting.has_value(), testing::error_message(consulting));
  CHECK(consulting->manifest.default_view_policy == "custom");
}

// A hub on `dir` with `adapters`, its agents auto-acking their invites.
std::unique_ptr<engine::Hub> open_hub(
    const std::filesystem::path& dir,
    std::vector<std::shared_ptr<const engine::ChannelAdapter>> adapters) {
  auto store = log::open_rocksdb_log_store(
      dir / "store", {.durability = log::Durability::kAsync});
  REQUIRE(store.has_value());
  auto hub = engine::Hub::open(
      {.store = std::shared_ptr<log::LogStore>(std::move(store->store)),
       .clock =
           std::make_shared<engine::ManualClock>(*engine::parse_timestamp(kT0)),
       .invite_ack_timeout = std::chrono::milliseconds(0),
       .adapters = std::move(adapters)});
  REQUIRE(hub.has_value());
  engine::Hub* raw = hub->get();
  for (const auto& passport : raw->list_agents({})) {
    raw->subscribe(*passport.agent_id,
                   [raw](const std::string& me,
                         const std::shared_ptr<const Envelope>& delivered) {
                     const Envelope& envelope = *delivered;
                     if (envelope.event_type != ev::kChannelInvite) return;
                     Envelope ack{
                         .channel_id = envelope.channel_id,
                         .sender_id = me,
                         .event_type = std::string(ev::kChannelInviteAck),
                         .event_data = engine::to_flex(json::object()).value()};
                     (void)raw->post_envelope(std::move(ack));
                   });
  }
  return std::move(*hub);
}

TEST_CASE("CHAN-19 open channels keep the manifest snapshotted at creation") {
  testing::ScratchDir dir;
  std::string alice, bob, old_channel;
  {
    auto hub = open_hub(dir.path(), {});
    alice = *hub->register_identity({.name = "alice"}, {}, {}, {})->agent_id;
    bob = *hub->register_identity({.name = "bob"}, {}, {}, {})->agent_id;
  }
  {
    auto hub = open_hub(
        dir.path(), {std::make_shared<CountingAdapter>("tournament", "first")});
    auto channel = hub->create_channel({.creator_id = alice,
                                        .manifest_type = "tournament",
                                        .participants = {bob}});
    REQUIRE_MESSAGE(channel.has_value(), testing::error_message(channel));
    old_channel = channel->channel_id;
    CHECK(channel->manifest.default_view_policy == "first");
  }
  auto hub = open_hub(
      dir.path(), {std::make_shared<CountingAdapter>("tournament", "second")});
  CHECK(hub->get_channel(old_channel)->manifest.default_view_policy == "first");
  auto fresh = hub->create_channel({.creator_id = alice,
                                    .manifest_type = "tournament",
                                    .participants = {bob}});
  REQUIRE(fresh.has_value());
  CHECK(fresh->manifest.default_view_policy == "second");
  // The old channel keeps working under the code now registered.
  Envelope text{.channel_id = old_channel,
                .sender_id = alice,
                .event_type = std::string(ev::kText),
                .event_data = engine::to_flex(json{{"text", "go"}}).value()};
  REQUIRE(hub->post_envelope(text).has_value());
  CHECK(json::parse(**hub->adapter_state(old_channel)) == json{{"texts", 1}});
}

TEST_CASE("CHAN-20 only participants may post, for every event type") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto eve = t.add_agent("eve");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  const auto wal_size = t.wal(id).size();
  const auto delivered = t.inbox(alice).size() + t.inbox(bob).size();
  const std::string expected = "channel '" + id +
                               "' only accepts sends from participants, got '" +
                               eve + "'";
  for (const char* type :
       {"ag2.msg.text", "ag2.packet", "ag2.context.set", "ag2.channel.opened",
        "ag2.channel.closed", "ag2.channel.invite.ack",
        "ag2.channel.invite.reject", "ag2.channel.custom",
        "ag2.task.cancel_request", "ag2.task.cancelled",
        "ag2.expectation.violated", "custom.event"}) {
    CAPTURE(type);
    const auto error = error_of(t.post(id, eve, type, {{"text", "x"}}));
    CHECK(error.kind == ErrorKind::kProtocol);
    CHECK(error.message == expected);
  }
  CHECK(t.wal(id).size() == wal_size);
  CHECK(t.inbox(alice).size() + t.inbox(bob).size() == delivered);
  CHECK(t.hub().get_channel(id)->state == ChannelState::kActive);

  auto op =
      t.ops().call("post_envelope", {{"envelope",
                                      {{"channel_id", id},
                                       {"sender_id", eve},
                                       {"audience", nullptr},
                                       {"event_type", "ag2.msg.text"},
                                       {"event_data", {{"text", "hi"}}}}}});
  CHECK(engine::wire_code(error_of(op).kind) == "protocol_error");
}

TEST_CASE("CHAN-20 a forged reject cannot fail someone else's handshake") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto eve = t.add_agent("eve");
  std::optional<engine::Result<std::string>> forged, ack;
  t.hub().subscribe(bob, [&](const std::string&,
                             const std::shared_ptr<const Envelope>& delivered) {
    const Envelope& envelope = *delivered;
    if (envelope.event_type != ev::kChannelInvite) return;
    const auto& id = envelope.channel_id;
    forged = t.post(id, eve, ev::kChannelInviteReject, {{"channel_id", id}});
    ack = t.post(id, bob, ev::kChannelInviteAck, {{"channel_id", id}});
  });
  auto channel = t.open(alice, "consulting", {bob});
  REQUIRE(channel.has_value());
  REQUIRE(forged.has_value());
  CHECK(error_of(*forged).message ==
        "channel '" + channel->channel_id +
            "' only accepts sends from participants, got '" + eve + "'");
  CHECK(ack->has_value());
  CHECK(channel->state == ChannelState::kActive);
  CHECK(channel->rejected_by.empty());
  CHECK(t.wal_types(channel->channel_id) ==
        std::vector<std::string>{"ag2.channel.invite", "ag2.channel.invite.ack",
                                 "ag2.channel.opened"});
}

TEST_CASE("CHAN-24 lifecycle notifications queue up for the creator") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto queue = t.hub().subscribe_queue(alice);  // alice reads later
  auto channel = t.open(alice, "consulting", {bob});
  REQUIRE(channel.has_value());
  REQUIRE(t.say(channel->channel_id, alice, "2+2?").has_value());
  auto reply = t.say(channel->channel_id, bob, "4");
  REQUIRE(reply.has_value());

  std::vector<Envelope> received;
  while (auto next = queue->pop(std::chrono::milliseconds(0))) {
    received.push_back(std::move(*next));
  }
  REQUIRE(types_of(received) == std::vector<std::string>{"ag2.channel.opened",
                                                         "ag2.msg.text",
                                                         "ag2.channel.closed"});
  CHECK(received[1].envelope_id == *reply);
  CHECK(data_of(received[2])["reason"] == "consulting_complete");
}

TEST_CASE("CHAN-24 an expiry wakes the creator's wait promptly") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto queue = t.hub().subscribe_queue(alice);
  auto channel =
      t.open(alice, "conversation", {bob}, json::object(), std::string("60s"));
  REQUIRE(channel.has_value());
  while (queue->pop(std::chrono::milliseconds(0))) {
  }
  std::optional<Envelope> woke_with;
  std::chrono::steady_clock::time_point woke_at;
  std::jthread waiter([&] {
    woke_with = queue->pop(std::chrono::seconds(30));
    woke_at = std::chrono::steady_clock::now();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  t.clock().advance(std::chrono::minutes(2));
  const auto expired_at = std::chrono::steady_clock::now();
  REQUIRE(t.hub().expire_due().has_value());
  waiter.join();
  REQUIRE(woke_with.has_value());
  CHECK(woke_with->event_type == ev::kChannelExpired);
  CHECK(woke_at - expired_at < std::chrono::seconds(2));
}

}  // namespace
}  // namespace parley
