// The handshake over a real socket: register binds, hello re-attaches (or is
// refused with AG2's error frames), replay after reconnect, receipts move
// cursors, a closed or superseded connection loses its agents. Conformance
// ALO-09..12, RECON-02, -03, -06, -08.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "engine/base/clock.h"
#include "engine/base/ids.h"
#include "engine/hub/hub.h"
#include "tests/serve_fixture.h"

namespace parley {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using testing::ServeFixture;
using testing::WsTestClient;
using namespace std::chrono_literals;

json hello(const std::string& name, json since = nullptr,
           std::string scheme = "none", json claim = json::object()) {
  json frame = {{"name", name},
                {"auth_scheme", std::move(scheme)},
                {"auth_claim", std::move(claim)},
                {"kind", "hello"}};
  if (!since.is_null()) frame["since_envelope_id"] = std::move(since);
  return frame;
}

// The next frame, REQUIRE'd to be of `kind`.
ordered_json expect(WsTestClient& client, std::string_view kind) {
  auto frame = client.next(5s);
  REQUIRE_MESSAGE(frame.has_value(), "no " << kind << " frame");
  REQUIRE_MESSAGE((*frame)["kind"] == kind, frame->dump());
  return *frame;
}

std::string text_of(const ordered_json& notify) {
  return notify["envelope"]["event_data"].value("text", "");
}

// Alice (on `a`) and bob (on `b`) in an active conversation.
struct Pair {
  ServeFixture serve;
  std::unique_ptr<WsTestClient> a = serve.connect();
  std::unique_ptr<WsTestClient> b = serve.connect();
  std::string alice = a->register_agent("alice");
  std::string bob = b->register_agent("bob");
  std::string channel = testing::open_channel(*a, alice, *b, bob);

  Pair() {
    // The opened notifications and the ack's response.
    a->next_of_kind("notify");
    b->next_of_kind("notify");
    b->next_of_kind("response");
  }
};

// Sends `client`'s ack of `envelope_id` for bob and REQUIREs that his
// cursor reaches it.
void ack_as_bob(Pair& p, WsTestClient& client, const std::string& envelope_id) {
  client.send({{"envelope_id", envelope_id},
               {"status", "ack"},
               {"recipient_id", p.bob},
               {"channel_id", p.channel},
               {"reason", ""},
               {"kind", "receipt"}});
  for (int i = 0;
       i < 500 && p.serve.hub().inbox_cursor(p.bob, p.channel) != envelope_id;
       ++i) {
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(p.serve.hub().inbox_cursor(p.bob, p.channel) == envelope_id);
}

TEST_CASE(
    "register binds the connection: the new agent's notifies arrive "
    "on it") {
  Pair p;
  p.a->call("post_envelope", testing::text_envelope(p.channel, p.alice, "hi"));
  auto notify = p.b->next_of_kind("notify");
  REQUIRE(notify.has_value());
  CHECK((*notify)["recipient_id"] == p.bob);
  CHECK(text_of(*notify) == "hi");
  // No welcome on the register path.
  CHECK_FALSE(p.b->next_of_kind("welcome", 200ms).has_value());
}

TEST_CASE("hello for an unknown name is error not_found") {
  ServeFixture serve;
  auto client = serve.connect();
  client->send(hello("ghost"));
  auto error = expect(*client, "error");
  CHECK(
      error.dump() ==
      R"({"code":"not_found","message":"unknown name: ghost","envelope_id":null,"kind":"error"})");
}

TEST_CASE("hello with an unknown scheme is auth_failed") {
  ServeFixture serve;
  auto client = serve.connect();
  client->register_agent("alice");
  auto other = serve.connect();
  other->send(hello("alice", nullptr, "kerberos"));
  auto error = expect(*other, "error");
  CHECK(error["code"] == "auth_failed");
  CHECK(error["message"] == "unknown auth scheme: 'kerberos'");
}

TEST_CASE("hello with a bad api key is auth_failed and binds nothing") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.auth_schemes = {"none", "api_key"};
    config.api_keys = {{"alice", "s3cret"}};
  });
  auto first = serve.connect();
  const std::string alice = first->register_agent(
      "alice", {{"scheme", "api_key"}, {"claim", {{"token", "s3cret"}}}});
  // The claim is never echoed.
  CHECK(first->call("get_agent", {{"name_or_id", "alice"}})["auth"]["claim"]
            .dump() == "{}");
  auto second = serve.connect();
  second->send(hello("alice", nullptr, "api_key", {{"token", "wrong"}}));
  CHECK(expect(*second, "error")["message"] == "api_key mismatch for 'alice'");
  second->send(hello("alice", nullptr, "none"));
  CHECK(expect(*second, "error")["message"] ==
        "auth scheme 'none' does not match 'alice''s registered scheme "
        "'api_key'");
  second->send(hello("alice", nullptr, "api_key", "s3cret"));
  auto error = expect(*second, "error");
  CHECK(error["code"] == "auth_failed");
  CHECK(error["message"] == "auth_claim must be a JSON object");
  // Still bound to the first connection.
  auto bob_client = serve.connect();
  const std::string bob = bob_client->register_agent("bob");
  testing::open_channel(*bob_client, bob, *first, alice);
  // The right key re-attaches.
  second->send(hello("alice", nullptr, "api_key", {{"token", "s3cret"}}));
  expect(*second, "welcome");
}

TEST_CASE(
    "RECON-02 hello re-attaches an existing name: welcome with an "
    "endpoint id and the hub's time") {
  ServeFixture serve;
  std::string alice;
  {
    auto first = serve.connect();
    alice = first->register_agent("alice");
  }
  auto second = serve.connect();
  second->send(hello("alice"));
  auto welcome = expect(*second, "welcome");
  REQUIRE(welcome.size() == 3);
  auto it = welcome.begin();
  CHECK(it.key() == "endpoint_id");
  CHECK(engine::has_id_shape(it.value().get<std::string>()));
  ++it;
  CHECK(it.key() == "hub_time");
  CHECK(engine::parse_timestamp(it.value().get<std::string>()).has_value());
  // The same identity as registered.
  CHECK(second->call("get_agent", {{"name_or_id", "alice"}})["agent_id"] ==
        alice);
}

TEST_CASE(
    "ALO-09 reconnect with a since-marker replays exactly what was "
    "missed, after the welcome") {
  Pair p;
  p.a->call("post_envelope", testing::text_envelope(p.channel, p.alice, "S"));
  auto seen = p.b->next_of_kind("notify");
  REQUIRE(seen.has_value());
  const std::string since = (*seen)["envelope"]["envelope_id"];
  p.b.reset();  // bob disconnects
  for (const char* step : {"missed-1", "missed-2"}) {
    json envelope = testing::text_envelope(p.channel, p.alice, step, {p.bob});
    envelope["envelope"]["event_type"] = "ag2.task.progress";
    envelope["envelope"]["event_data"] = {{"step", step}};
    p.a->call("post_envelope", envelope);
  }
  // Alice's own post to herself only is not bob's.
  p.a->call("post_envelope",
            testing::text_envelope(p.channel, p.alice, "private", {p.alice}));
  auto back = p.serve.connect();
  back->send(hello("bob", since));
  expect(*back, "welcome");
  for (const char* step : {"missed-1", "missed-2"}) {
    auto notify = expect(*back, "notify");
    CHECK(notify["recipient_id"] == p.bob);
    CHECK(notify["envelope"]["event_data"]["step"] == step);
  }
  CHECK_FALSE(back->next(250ms).has_value());
}

TEST_CASE(
    "a replay and the live notifies racing it reach the agent once each, "
    "in the channel's order") {
  Pair p;
  p.b.reset();  // bob is away while alice keeps posting
  std::atomic<bool> stop = false;
  std::atomic<int> posted = 0;
  std::jthread poster([&] {
    for (int n = 0; !stop; ++n) {
      p.a->call("post_envelope",
                testing::text_envelope(p.channel, p.alice, std::to_string(n)));
      posted = n + 1;
    }
  });
  struct StopPoster {
    std::atomic<bool>& stop;
    ~StopPoster() { stop = true; }
  } stop_poster{stop};  // before poster joins, even when a REQUIRE throws
  // Each reconnect replays from bob's cursor while alice's posts go on
  // arriving live: every text must come next after the one before it.
  int last = -1;
  for (int reconnect = 0; reconnect < 20; ++reconnect) {
    auto back = p.serve.connect();
    back->send(hello("bob", ""));
    expect(*back, "welcome");
    const int wanted = posted + 10;
    std::string last_id;
    while (last < wanted) {
      auto notify = expect(*back, "notify");
      if (notify["envelope"]["event_type"] != "ag2.msg.text") continue;
      const int n = std::stoi(text_of(notify));
      REQUIRE_MESSAGE(n == last + 1, "reconnect " << reconnect << ": " << n
                                                  << " after " << last);
      last = n;
      last_id = notify["envelope"]["envelope_id"];
    }
    ack_as_bob(p, *back, last_id);
  }
}

TEST_CASE("ALO-10 replay skips terminal channels") {
  Pair p;
  p.a->call("post_envelope", testing::text_envelope(p.channel, p.alice, "S"));
  const std::string since =
      (*p.b->next_of_kind("notify"))["envelope"]["envelope_id"];
  p.b.reset();
  p.a->call("post_envelope",
            testing::text_envelope(p.channel, p.alice, "late"));
  p.a->call("close_channel", {{"channel_id", p.channel}});
  auto back = p.serve.connect();
  back->send(hello("bob", since));
  expect(*back, "welcome");
  CHECK_FALSE(back->next(250ms).has_value());
}

TEST_CASE(
    "ALO-11 the persisted cursor beats an empty since-marker, receipts "
    "move cursors") {
  Pair p;
  p.a->call("post_envelope", testing::text_envelope(p.channel, p.alice, "one"));
  auto notify = p.b->next_of_kind("notify");
  REQUIRE(notify.has_value());
  const std::string head = (*notify)["envelope"]["envelope_id"];
  ack_as_bob(p, *p.b, head);
  p.b.reset();
  auto back = p.serve.connect();
  back->send(hello("bob", ""));
  expect(*back, "welcome");
  CHECK_FALSE(back->next(250ms).has_value());
}

TEST_CASE(
    "ALO-12 replay is opt-in: hello without a since-marker replays "
    "nothing") {
  Pair p;
  p.b.reset();
  p.a->call("post_envelope",
            testing::text_envelope(p.channel, p.alice, "missed"));
  auto back = p.serve.connect();
  back->send(hello("bob"));
  expect(*back, "welcome");
  CHECK_FALSE(back->next(250ms).has_value());
}

TEST_CASE(
    "ALO-02/03/04 nacks, older acks and unattributable receipts move "
    "no cursor") {
  Pair p;
  p.a->call("post_envelope", testing::text_envelope(p.channel, p.alice, "1"));
  const std::string first =
      (*p.b->next_of_kind("notify"))["envelope"]["envelope_id"];
  p.a->call("post_envelope", testing::text_envelope(p.channel, p.alice, "2"));
  const std::string second =
      (*p.b->next_of_kind("notify"))["envelope"]["envelope_id"];
  auto receipt = [&](const std::string& id, const std::string& status,
                     const std::string& recipient, const std::string& channel) {
    p.b->send({{"envelope_id", id},
               {"status", status},
               {"recipient_id", recipient},
               {"channel_id", channel},
               {"kind", "receipt"}});
  };
  receipt(second, "nack", p.bob, p.channel);
  receipt(second, "ack", "", p.channel);
  receipt(second, "ack", p.bob, "");
  receipt(second, "ack", p.alice, p.channel);  // not bound here: dropped
  // A ping answered means every frame before it was handled.
  p.b->send({{"kind", "ping"}});
  expect(*p.b, "pong");
  std::this_thread::sleep_for(100ms);
  CHECK(p.serve.hub().inbox_cursor(p.bob, p.channel) == "");
  CHECK(p.serve.hub().inbox_cursor(p.alice, p.channel) == "");
  receipt(second, "ack", p.bob, p.channel);
  receipt(first, "ack", p.bob, p.channel);  // older: ignored
  for (int i = 0;
       i < 200 && p.serve.hub().inbox_cursor(p.bob, p.channel) != second; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(100ms);
  CHECK(p.serve.hub().inbox_cursor(p.bob, p.channel) == second);
}

TEST_CASE(
    "RECON-03 re-attaching from a new connection moves delivery, the "
    "old connection keeps its other agents, its receipts for the "
    "moved agent are dropped") {
  ServeFixture serve;
  auto v1 = serve.connect();
  const std::string alice = v1->register_agent("alice");
  const std::string bob = v1->register_agent("bob");
  auto carol_client = serve.connect();
  const std::string carol = carol_client->register_agent("carol");
  const std::string channel =
      testing::open_channel(*carol_client, carol, *v1, bob, "conversation");
  // Bob's opened notify reaches V1 before bob moves.
  REQUIRE(v1->next_of_kind("notify").has_value());
  auto v2 = serve.connect();
  v2->send(hello("bob"));
  expect(*v2, "welcome");
  carol_client->call("post_envelope",
                     testing::text_envelope(channel, carol, "after-reattach"));
  auto moved = v2->next_of_kind("notify");
  REQUIRE(moved.has_value());
  CHECK(text_of(*moved) == "after-reattach");
  const std::string id = (*moved)["envelope"]["envelope_id"];
  // V1 still serves alice.
  CHECK(v1->call("get_agent", {{"name_or_id", alice}})["name"] == "alice");
  // V1 no longer gets bob's notifies, and its receipt for bob is dropped.
  v1->send({{"envelope_id", id},
            {"status", "ack"},
            {"recipient_id", bob},
            {"channel_id", channel},
            {"kind", "receipt"}});
  v1->send({{"kind", "ping"}});
  CHECK(v1->next_of_kind("pong").has_value());
  std::this_thread::sleep_for(100ms);
  CHECK(serve.hub().inbox_cursor(bob, channel) == "");
  while (auto frame = v1->next(100ms)) {
    CHECK_MESSAGE((*frame)["kind"] != "notify", frame->dump());
  }
}

TEST_CASE(
    "RECON-03 after a re-attach the old connection's requests for the moved "
    "agent are refused with access_denied") {
  ServeFixture serve;
  auto v1 = serve.connect();
  const std::string bob = v1->register_agent("bob");
  auto v2 = serve.connect();
  v2->send(hello("bob"));
  expect(*v2, "welcome");
  auto refused = v1->request("set_resume",
                             {{"agent_id", bob}, {"resume", json::object()}});
  CHECK(refused["error_code"] == "access_denied");
  CHECK(refused["error_message"] ==
        "connection is not bound to agent '" + bob + "'");
  CHECK(v2->request("set_resume", {{"agent_id", bob},
                                   {"resume", json::object()}})["ok"] == true);
}

TEST_CASE(
    "RECON-08 a closed connection unbinds its agents, other "
    "connections are unaffected") {
  Pair p;
  p.b.reset();
  // Bob is offline: the post lands, nothing is delivered, and no inbox
  // counter grows for him.
  std::this_thread::sleep_for(300ms);  // the server sees the close
  p.a->call("post_envelope",
            testing::text_envelope(p.channel, p.alice, "while away"));
  CHECK_FALSE(p.serve.hub().health().pending_inbox.contains(p.bob));
  // Alice's connection still works.
  CHECK(p.a->call("get_channel", {{"channel_id", p.channel}})["state"] ==
        "active");
}

TEST_CASE("RECON-06 hello for an agent that was unregistered is not_found") {
  ServeFixture serve;
  auto client = serve.connect();
  const std::string alice = client->register_agent("alice");
  client->call("unregister", {{"agent_id", alice}});
  auto other = serve.connect();
  other->send(hello("alice"));
  CHECK(expect(*other, "error")["message"] == "unknown name: alice");
}

}  // namespace
}  // namespace parley
