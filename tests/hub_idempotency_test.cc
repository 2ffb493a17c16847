// Idempotent posts (AG2 ignores the key; scenarios IDEM-*): an idempotency_key
// deduplicates per (channel, sender, key), durably.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using engine::Envelope;
using engine::ErrorKind;
using testing::TestHub;

struct Pair {
  TestHub t;
  std::string alice;
  std::string bob = t.add_agent("bob");
  std::string channel;

  explicit Pair(engine::Rule alice_rule = {}) {
    alice = t.add_agent("alice", {}, alice_rule);
    auto opened = t.open(alice, "conversation", {bob});
    REQUIRE(opened.has_value());
    channel = opened->channel_id;
  }

  engine::Result<std::string> send(std::string_view text,
                                   std::optional<std::string> key,
                                   std::string_view channel_id = {},
                                   std::string_view sender = {}) {
    Envelope envelope;
    envelope.channel_id = std::string(
        channel_id.empty() ? std::string_view(channel) : channel_id);
    envelope.sender_id =
        std::string(sender.empty() ? std::string_view(alice) : sender);
    envelope.event_type = std::string(engine::event_type::kText);
    envelope.event_data =
        engine::to_flex(nlohmann::json{{"text", text}}).value();
    envelope.idempotency_key = std::move(key);
    return t.hub().post_envelope(std::move(envelope));
  }

  std::vector<std::string> texts() {
    std::vector<std::string> out;
    for (const auto& envelope : t.wal(channel)) {
      if (envelope.event_type != engine::event_type::kText) continue;
      out.push_back(
          engine::flex_to_json(envelope.event_data)["text"].get<std::string>());
    }
    return out;
  }
};

TEST_CASE(
    "IDEM-01 a retry with the same key and payload returns the first "
    "id and appends nothing") {
  Pair p;
  auto first = p.send("only once please", "op-42");
  REQUIRE(first.has_value());
  const auto wal_size = p.t.wal(p.channel).size();
  const auto deliveries = p.t.inbox(p.bob).size();
  auto retry = p.send("only once please", "op-42");
  REQUIRE(retry.has_value());
  CHECK(*retry == *first);
  CHECK(p.t.wal(p.channel).size() == wal_size);
  CHECK(p.t.inbox(p.bob).size() == deliveries);
  CHECK(p.texts() == std::vector<std::string>{"only once please"});
}

TEST_CASE("IDEM-01 the same key with another payload is a conflict") {
  Pair p;
  auto first = p.send("only once please", "op-42");
  REQUIRE(first.has_value());
  auto other = p.send("DIFFERENT CONTENT - should not land", "op-42");
  REQUIRE_FALSE(other.has_value());
  CHECK(other.error().kind == ErrorKind::kConflict);
  CHECK(engine::wire_code(other.error().kind) == "error");
  CHECK(other.error().message ==
        "idempotency key 'op-42' was already used by sender '" + p.alice +
            "' in channel '" + p.channel + "' with another payload (envelope " +
            *first + ")");
  CHECK(p.texts() == std::vector<std::string>{"only once please"});
}

TEST_CASE("IDEM-01 keys survive a restart") {
  Pair p;
  auto first = p.send("durable", "op-1");
  REQUIRE(first.has_value());
  p.t.restart();
  auto retry = p.send("durable", "op-1");
  REQUIRE(retry.has_value());
  CHECK(*retry == *first);
  auto other = p.send("changed", "op-1");
  REQUIRE_FALSE(other.has_value());
  CHECK(other.error().kind == ErrorKind::kConflict);
  CHECK(p.texts() == std::vector<std::string>{"durable"});
}

TEST_CASE("IDEM-01 posts without a key, or with an empty one, never dedup") {
  Pair p;
  auto a = p.send("same", std::nullopt);
  auto b = p.send("same", std::nullopt);
  auto c = p.send("same", "");
  auto d = p.send("same", "");
  REQUIRE((a && b && c && d));
  CHECK(p.texts().size() == 4);
}

TEST_CASE("IDEM-02 keys are scoped per channel") {
  Pair p;
  auto second = p.t.open(p.alice, "conversation", {p.bob});
  REQUIRE(second.has_value());
  auto in_first = p.send("hello", "op-7");
  auto in_second = p.send("hello", "op-7", second->channel_id);
  REQUIRE(in_first.has_value());
  REQUIRE(in_second.has_value());
  CHECK(*in_first != *in_second);
  CHECK(p.t.wal(second->channel_id).back().envelope_id == *in_second);
}

TEST_CASE("IDEM-02 keys are scoped per sender") {
  Pair p;
  auto from_alice = p.send("hello", "op-7");
  auto from_bob = p.send("hello", "op-7", p.channel, p.bob);
  REQUIRE(from_alice.has_value());
  REQUIRE(from_bob.has_value());
  CHECK(*from_alice != *from_bob);
}

TEST_CASE("IDEM-03 keys do not expire (Parley's decision)") {
  Pair p;
  auto first = p.send("kept", "op-9");
  REQUIRE(first.has_value());
  p.t.clock().advance(std::chrono::hours(24 * 365));
  p.t.restart();
  auto retry = p.send("kept", "op-9");
  REQUIRE(retry.has_value());
  CHECK(*retry == *first);
}

TEST_CASE(
    "IDEM-03 a retry after the channel ended still returns the "
    "original id") {
  Pair p;
  auto first = p.send("last words", "op-10");
  REQUIRE(first.has_value());
  REQUIRE(p.t.hub().close_channel(p.channel).has_value());
  auto retry = p.send("last words", "op-10");
  REQUIRE(retry.has_value());
  CHECK(*retry == *first);
  auto fresh = p.send("last words", "op-11");
  REQUIRE_FALSE(fresh.has_value());
  CHECK(fresh.error().kind == ErrorKind::kProtocol);
}

TEST_CASE("a refused post leaves its key unused") {
  engine::Rule shallow;
  shallow.limits.delegation_depth = 1;
  Pair p(shallow);
  auto post = [&](std::int64_t depth) {
    Envelope envelope;
    envelope.channel_id = p.channel;
    envelope.sender_id = p.alice;
    envelope.event_type = std::string(engine::event_type::kText);
    envelope.event_data =
        engine::to_flex(nlohmann::json{{"text", "deep"}}).value();
    envelope.depth = depth;
    envelope.idempotency_key = "op-12";
    return p.t.hub().post_envelope(std::move(envelope));
  };
  REQUIRE_FALSE(post(2).has_value());
  auto accepted = post(1);
  REQUIRE(accepted.has_value());
  CHECK(p.t.wal(p.channel).back().envelope_id == *accepted);
}

TEST_CASE("IDEM-04 retries do not consume rate budget") {
  engine::Rule limited;
  limited.limits.rate_per_minute = 60;
  limited.limits.rate_burst = 1;
  Pair p(limited);
  auto first = p.send("once", "op-99");
  REQUIRE(first.has_value());
  auto retry = p.send("once", "op-99");
  REQUIRE(retry.has_value());
  CHECK(*retry == *first);
  auto keyless = p.send("something else", std::nullopt);
  REQUIRE_FALSE(keyless.has_value());
  CHECK(keyless.error().kind == ErrorKind::kAccessDenied);
  CHECK(keyless.error().message.find("rate limit") != std::string::npos);
}

TEST_CASE("idempotent posts through the control plane") {
  Pair p;
  nlohmann::json envelope = {
      {"channel_id", p.channel},       {"sender_id", p.alice},
      {"audience", nullptr},           {"event_type", "ag2.msg.text"},
      {"event_data", {{"text", "x"}}}, {"idempotency_key", "wire-1"}};
  auto first = p.t.ops().call("post_envelope", {{"envelope", envelope}});
  REQUIRE(first.has_value());
  auto retry = p.t.ops().call("post_envelope", {{"envelope", envelope}});
  REQUIRE(retry.has_value());
  CHECK(*retry == *first);
  envelope["event_data"] = {{"text", "y"}};
  auto conflict = p.t.ops().call("post_envelope", {{"envelope", envelope}});
  REQUIRE_FALSE(conflict.has_value());
  CHECK(conflict.error().kind == ErrorKind::kConflict);
}

TEST_CASE("concurrent posts with one key land once") {
  Pair p;
  std::vector<std::string> ids(8);
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      threads.emplace_back([&, i] {
        auto id = p.send("racing", "op-race");
        ids[i] = id ? *id : "failed: " + id.error().message;
      });
    }
  }
  for (const auto& id : ids) CHECK(id == ids.front());
  CHECK(p.texts() == std::vector<std::string>{"racing"});
}

}  // namespace
}  // namespace parley

namespace parley {
namespace {

TEST_CASE("IDEM-02 after a restart keys stay scoped per channel") {
  Pair p;
  auto second = p.t.open(p.alice, "conversation", {p.bob});
  REQUIRE(second.has_value());
  auto in_first = p.send("hello", "op-7");
  REQUIRE(in_first.has_value());
  p.t.restart();
  auto in_second = p.send("hello", "op-7", second->channel_id);
  REQUIRE(in_second.has_value());
  CHECK(*in_second != *in_first);
  CHECK(*p.send("hello", "op-7") == *in_first);
}

TEST_CASE("IDEM-04 after a restart a retry is still served from the log") {
  engine::Rule limited;
  limited.limits.rate_per_minute = 60;
  limited.limits.rate_burst = 1;
  Pair p(limited);
  auto first = p.send("once", "op-99");
  REQUIRE(first.has_value());
  p.t.restart();
  auto retry = p.send("once", "op-99");
  REQUIRE(retry.has_value());
  CHECK(*retry == *first);
  CHECK(p.send("fresh bucket", std::nullopt).has_value());
  CHECK_FALSE(p.send("spent", std::nullopt).has_value());
}

}  // namespace
}  // namespace parley
