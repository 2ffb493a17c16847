// Races and invariants (RACE-*) with real threads: concurrent writers of one
// channel serialise, channels stay independent, unregistering and closing race
// cleanly with sends, and a waiting create_channel is always released when its
// channel ends.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/hub/hub.h"
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

std::string text_of(const Envelope& envelope) {
  return engine::flex_to_json(envelope.event_data)["text"];
}

// WAL order = id order, and the per-channel sequences are 1..n.
void check_wal_order(const std::vector<Envelope>& wal) {
  for (std::size_t i = 0; i < wal.size(); ++i) {
    CHECK(wal[i].sequence == i + 1);
    if (i > 0) {
      CHECK_MESSAGE(wal[i - 1].envelope_id < wal[i].envelope_id,
                    "WAL positions ", i - 1, " and ", i, " out of id order");
    }
  }
}

// `count` conversations of alice and bob; their channel ids.
std::vector<std::string> open_conversations(TestHub& t,
                                            const std::string& alice,
                                            const std::string& bob, int count) {
  std::vector<std::string> channels;
  for (int c = 0; c < count; ++c) {
    auto channel = t.open(alice, "conversation", {bob});
    REQUIRE(channel.has_value());
    channels.push_back(channel->channel_id);
  }
  return channels;
}

std::vector<Envelope> texts_in(const std::vector<Envelope>& wal) {
  std::vector<Envelope> out;
  std::ranges::copy_if(wal, std::back_inserter(out), [](const Envelope& e) {
    return e.event_type == ev::kText;
  });
  return out;
}

// Runs `body(i)` on `count` threads released together; joins them all.
template <typename Body>
void race(int count, Body body) {
  std::latch start(count);
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      body(i);
    });
  }
  for (auto& thread : threads) thread.join();
}

TEST_CASE("RACE-01 concurrent posts to one channel serialise cleanly") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const std::string& id = channel->channel_id;
  const std::size_t before = t.wal(id).size();

  std::vector<std::optional<std::string>> ids(5);
  race(5, [&](int i) {
    auto posted = t.say(id, alice, "msg-" + std::to_string(i));
    if (posted) ids[static_cast<std::size_t>(i)] = *posted;
  });
  std::set<std::string> distinct;
  for (const auto& posted : ids) {
    REQUIRE(posted.has_value());
    distinct.insert(*posted);
  }
  CHECK(distinct.size() == 5);

  const auto wal = t.wal(id);
  check_wal_order(wal);
  REQUIRE(wal.size() == before + 5);
  std::multiset<std::string> bodies;
  std::set<std::string> wal_ids;
  for (const Envelope& text : texts_in(wal)) {
    bodies.insert(text_of(text));
    wal_ids.insert(text.envelope_id);
  }
  CHECK(bodies == std::multiset<std::string>{"msg-0", "msg-1", "msg-2", "msg-3",
                                             "msg-4"});
  CHECK(wal_ids == distinct);
  const json state = t.state(id);
  CHECK(state["turn_count"] == 5);
  CHECK(state["last_envelope_id"] == wal.back().envelope_id);
  CHECK(t.inbox(bob).size() >= 5);
}

TEST_CASE("RACE-01 many writers on both sides keep WAL order = id order") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const std::string& id = channel->channel_id;
  constexpr int kThreads = 8;
  constexpr int kEach = 25;
  std::mutex mutex;
  std::vector<std::string> accepted;
  race(kThreads, [&](int i) {
    for (int n = 0; n < kEach; ++n) {
      auto posted = t.say(id, i % 2 == 0 ? alice : bob,
                          std::to_string(i) + "/" + std::to_string(n));
      CHECK(posted.has_value());
      if (!posted) return;
      std::lock_guard lock(mutex);
      accepted.push_back(*posted);
    }
  });
  const auto wal = t.wal(id);
  check_wal_order(wal);
  const auto texts = texts_in(wal);
  REQUIRE(texts.size() == kThreads * kEach);
  std::vector<std::string> wal_ids;
  for (const Envelope& text : texts) wal_ids.push_back(text.envelope_id);
  std::ranges::sort(accepted);
  CHECK(wal_ids == accepted);  // the WAL is sorted by id, so this is equality
  // Each writer's own posts are in its program order.
  for (int i = 0; i < kThreads; ++i) {
    int next = 0;
    for (const Envelope& text : texts) {
      const std::string body = text_of(text);
      if (body.starts_with(std::to_string(i) + "/")) {
        CHECK(body == std::to_string(i) + "/" + std::to_string(next));
        ++next;
      }
    }
    CHECK(next == kEach);
  }
  CHECK(t.state(id)["turn_count"] == kThreads * kEach);
  t.restart();
  CHECK(t.state(id)["turn_count"] == kThreads * kEach);
  check_wal_order(t.wal(id));
}

TEST_CASE("RACE-02 channels are independent under concurrency") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  auto to_bob = t.open(alice, "conversation", {bob});
  auto to_carol = t.open(alice, "conversation", {carol});
  REQUIRE(to_bob.has_value());
  REQUIRE(to_carol.has_value());
  race(4, [&](int i) {
    const bool bob_side = i % 2 == 0;
    auto posted =
        t.say(bob_side ? to_bob->channel_id : to_carol->channel_id, alice,
              std::string(bob_side ? "to bob " : "to carol ") +
                  std::to_string(i / 2 + 1));
    CHECK(posted.has_value());
  });
  auto bodies = [&](const std::string& channel) {
    std::multiset<std::string> out;
    for (const Envelope& text : texts_in(t.wal(channel))) {
      out.insert(text_of(text));
    }
    return out;
  };
  CHECK(bodies(to_bob->channel_id) ==
        std::multiset<std::string>{"to bob 1", "to bob 2"});
  CHECK(bodies(to_carol->channel_id) ==
        std::multiset<std::string>{"to carol 1", "to carol 2"});
  check_wal_order(t.wal(to_bob->channel_id));
  check_wal_order(t.wal(to_carol->channel_id));
}

TEST_CASE("RACE-02 many channels written at once stay separate") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  constexpr int kChannels = 6;
  constexpr int kEach = 20;
  const auto channels = open_conversations(t, alice, bob, kChannels);
  race(kChannels * 2, [&](int i) {
    const std::string& channel = channels[static_cast<std::size_t>(i / 2)];
    for (int n = 0; n < kEach; ++n) {
      CHECK(t.say(channel, i % 2 == 0 ? alice : bob,
                  channel + ":" + std::to_string(i) + ":" + std::to_string(n))
                .has_value());
    }
  });
  std::string previous_largest;
  for (const auto& channel : channels) {
    const auto wal = t.wal(channel);
    check_wal_order(wal);
    const auto texts = texts_in(wal);
    CHECK(texts.size() == 2 * kEach);
    for (const Envelope& text : texts) {
      CHECK(text.channel_id == channel);
      CHECK(text_of(text).starts_with(channel + ":"));
    }
    CHECK(t.state(channel)["turn_count"] == 2 * kEach);
  }
}

// Posts racing each other share group commits; a refused one must not
// take the others down.
TEST_CASE("concurrent refused posts fail alone and the others all land") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto mallory = t.add_agent("mallory");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  constexpr int kPosters = 12;
  constexpr int kEach = 10;
  race(kPosters, [&](int i) {
    for (int n = 0; n < kEach; ++n) {
      const std::string text = std::to_string(i) + ":" + std::to_string(n);
      if (i % 3 == 2) {
        auto refused = t.say(channel->channel_id, mallory, text);
        CHECK_FALSE(refused.has_value());
        if (refused) continue;
        CHECK(refused.error().kind == ErrorKind::kProtocol);
        CHECK(refused.error().message.find(
                  "only accepts sends from participants") != std::string::npos);
      } else {
        CHECK(t.say(channel->channel_id, i % 3 == 0 ? alice : bob, text)
                  .has_value());
      }
    }
  });
  const auto wal = t.wal(channel->channel_id);
  check_wal_order(wal);
  const auto texts = texts_in(wal);
  CHECK(texts.size() == kPosters * kEach * 2 / 3);
  for (const Envelope& text : texts) CHECK(text.sender_id != mallory);
  CHECK(t.state(channel->channel_id)["turn_count"] == texts.size());
  t.restart();
  CHECK(t.state(channel->channel_id)["turn_count"] == texts.size());
}

// Posts still queued when the hub closes are refused; posts already
// sequenced are written by the close. None hangs, and every post that was
// acked is in the log when the hub opens again.
TEST_CASE("posts racing with close either land or are refused, none lost") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  constexpr int kPosters = 8;
  const auto channels = open_conversations(t, alice, bob, kPosters);
  std::vector<std::vector<std::string>> acked(kPosters);
  std::atomic<bool> closed = false;
  std::atomic<int> landed = 0;  // posters with at least one post acked
  race(kPosters + 1, [&](int i) {
    if (i == kPosters) {
      // Close while every poster is posting, however loaded the machine.
      while (landed < kPosters) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      CHECK(t.hub().close().has_value());
      closed = true;
      return;
    }
    const std::string& channel = channels[static_cast<std::size_t>(i)];
    for (int n = 0;; ++n) {
      auto posted = t.say(channel, n % 2 == 0 ? alice : bob, std::to_string(n));
      if (!posted) {
        CHECK(posted.error().kind == ErrorKind::kStorage);
        break;
      }
      acked[static_cast<std::size_t>(i)].push_back(*posted);
      if (n == 0) ++landed;
    }
  });
  CHECK(closed);
  t.restart();
  for (int c = 0; c < kPosters; ++c) {
    const auto& ids = acked[static_cast<std::size_t>(c)];
    CHECK_FALSE(ids.empty());
    std::vector<std::string> logged;
    for (const Envelope& text : texts_in(t.wal(channels[c]))) {
      logged.push_back(text.envelope_id);
    }
    CHECK(logged == ids);  // a refused post wrote nothing
  }
}

TEST_CASE("RACE-04 unregistering a participant mid-channel keeps its WAL") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const std::string& id = channel->channel_id;
  REQUIRE(t.say(id, alice, "hello", std::vector{bob}).has_value());
  const auto before = t.wal(id);

  REQUIRE(t.hub().unregister(bob).has_value());
  const auto after = t.wal(id);
  REQUIRE(after.size() == before.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    CHECK(after[i].envelope_id == before[i].envelope_id);
  }
  auto gone = t.hub().get_agent(bob);
  REQUIRE_FALSE(gone.has_value());
  CHECK(gone.error().kind == ErrorKind::kNotFound);

  const std::size_t delivered = t.inbox(bob).size();
  auto posted = t.say(id, alice, "anyone there?", std::vector{bob});
  REQUIRE(posted.has_value());
  CHECK(t.inbox(bob).size() == delivered);  // accepted, not delivered
  const auto texts = texts_in(t.wal(id));
  REQUIRE(texts.size() == 2);
  CHECK(text_of(texts[1]) == "anyone there?");
}

TEST_CASE("RACE-04 unregistering while the other side keeps posting") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const std::string& id = channel->channel_id;
  // alice posts to bob until 20 of her posts started after bob was gone.
  std::atomic<bool> unregistered = false;
  std::atomic<int> accepted = 0;
  int attempts = 0;
  std::latch started(1);
  std::thread writer([&] {
    int after = 0;
    for (; after < 20 && attempts < 100000; ++attempts) {
      if (attempts == 5) started.count_down();
      const bool gone = unregistered;
      auto posted =
          t.say(id, alice, "p" + std::to_string(attempts), std::vector{bob});
      CHECK_MESSAGE(posted.has_value(), testing::error_message(posted));
      if (posted) ++accepted;
      if (gone) ++after;
    }
  });
  started.wait();
  const bool removed = t.hub().unregister(bob).has_value();
  const std::size_t delivered = t.inbox(bob).size();
  unregistered = true;
  writer.join();
  REQUIRE(removed);
  CHECK(accepted == attempts);
  const auto wal = t.wal(id);
  check_wal_order(wal);
  CHECK(texts_in(wal).size() == static_cast<std::size_t>(attempts));
  CHECK(t.state(id)["turn_count"] == attempts);
  // Nothing is delivered to bob once he is gone (one delivery may have been
  // in flight when unregister returned).
  CHECK(t.inbox(bob).size() <= delivered + 1);
  CHECK_FALSE(t.hub().get_agent(bob).has_value());
  t.restart();
  CHECK(texts_in(t.wal(id)).size() == static_cast<std::size_t>(attempts));
  CHECK_FALSE(t.hub().get_agent(bob).has_value());
}

TEST_CASE(
    "RACE-05 a close racing with sends: every accepted send precedes "
    "the one closed envelope") {
  for (int round = 0; round < 10; ++round) {
    CAPTURE(round);
    TestHub t;
    const auto alice = t.add_agent("alice");
    const auto bob = t.add_agent("bob");
    auto channel = t.open(alice, "conversation", {bob});
    REQUIRE(channel.has_value());
    const std::string id = channel->channel_id;
    const std::string closed_message = "channel '" + id + "' is closed";

    std::mutex mutex;
    std::vector<std::string> accepted;
    std::vector<std::string> refusals;
    constexpr int kWriters = 4;
    race(kWriters + 2, [&](int i) {
      if (i >= kWriters) {
        // Two closers; close is idempotent.
        std::this_thread::sleep_for(std::chrono::microseconds(300 * round));
        auto closed = t.hub().close_channel(id, "race");
        CHECK_MESSAGE(closed.has_value(), testing::error_message(closed));
        return;
      }
      for (int n = 0; n < 200; ++n) {
        auto posted = t.say(id, i % 2 == 0 ? alice : bob,
                            std::to_string(i) + "/" + std::to_string(n));
        std::lock_guard lock(mutex);
        if (posted) {
          accepted.push_back(*posted);
        } else {
          refusals.push_back(posted.error().message);
          break;  // once closed, always closed
        }
      }
    });
    const auto wal = t.wal(id);
    check_wal_order(wal);
    REQUIRE_FALSE(wal.empty());
    CHECK(wal.back().event_type == ev::kChannelClosed);
    CHECK(std::ranges::count_if(wal, [](const Envelope& e) {
            return e.event_type == ev::kChannelClosed;
          }) == 1);
    const std::string& closed_id = wal.back().envelope_id;
    std::set<std::string> wal_texts;
    for (const Envelope& text : texts_in(wal)) {
      wal_texts.insert(text.envelope_id);
    }
    CHECK(wal_texts.size() == accepted.size());
    for (const auto& posted : accepted) {
      CHECK(wal_texts.contains(posted));
      CHECK(posted < closed_id);
    }
    for (const auto& message : refusals) CHECK(message == closed_message);
    const auto metadata = t.hub().get_channel(id);
    CHECK(metadata->state == ChannelState::kClosed);
    CHECK(metadata->close_reason == "race");
    CHECK(t.state(id)["turn_count"] == accepted.size());
  }
}

TEST_CASE("RACE-05 an adapter close racing with sends") {
  // Both consulting parties race to speak: exactly the prompt and the reply
  // are accepted, then the hub's closed envelope, then nothing.
  for (int round = 0; round < 10; ++round) {
    CAPTURE(round);
    TestHub t;
    const auto alice = t.add_agent("alice");
    const auto bob = t.add_agent("bob");
    auto channel = t.open(alice, "consulting", {bob});
    REQUIRE(channel.has_value());
    const std::string id = channel->channel_id;
    std::atomic<int> accepted = 0;
    // Every thread keeps trying until the channel is closed: a refusal
    // comes back fast, so a fixed number of tries could all land before
    // the prompt.
    race(6, [&](int i) {
      for (int n = 0; n < 1'000'000; ++n) {
        auto posted = t.say(id, i % 2 == 0 ? alice : bob, "x");
        if (posted) {
          ++accepted;
        } else if (posted.error().message.ends_with("is closed")) {
          break;
        }
      }
    });
    CHECK(accepted == 2);
    const auto wal = t.wal(id);

    check_wal_order(wal);
    REQUIRE(wal.size() >= 3);
    CHECK(wal[wal.size() - 3].sender_id == alice);
    CHECK(wal[wal.size() - 2].sender_id == bob);
    CHECK(wal.back().event_type == ev::kChannelClosed);
    CHECK(t.hub().get_channel(id)->close_reason == "consulting_complete");
  }
}

// A hub of the test's own with a long invite timeout and no auto-acking
// invitees, so create_channel really waits.
struct WaitingHub : testing::HandshakeHub {
  WaitingHub() : HandshakeHub(std::chrono::seconds(30)) { open(); }
  void post_as(const std::string& sender, const std::string& channel,
               std::string_view type) {
    Envelope envelope;
    envelope.channel_id = channel;
    envelope.sender_id = sender;
    envelope.event_type = std::string(type);
    envelope.event_data =
        engine::to_flex(json{{"channel_id", channel}}).value();
    auto posted = hub->post_envelope(std::move(envelope));
    CHECK_MESSAGE(posted.has_value(), testing::error_message(posted));
  }
};

// Starts create_channel on another thread, ends the pending channel with
// `end`, and requires the waiting call to fail promptly naming `reason`.
template <typename End>
void check_waiter_released(const std::string& type, int invitees,
                           std::string_view reason, End end) {
  WaitingHub h;
  const auto alice = h.add("alice");
  std::vector<std::string> others;
  for (int i = 0; i < invitees; ++i) {
    others.push_back(h.add("agent" + std::to_string(i)));
  }
  engine::Result<ChannelMetadata> waited = engine::protocol_error("unset");
  std::chrono::steady_clock::time_point returned;
  std::jthread creator([&] {
    waited = h.hub->create_channel(
        {.creator_id = alice, .manifest_type = type, .participants = others});
    returned = std::chrono::steady_clock::now();
  });
  const std::string channel_id = h.await_pending();
  const auto ended_at = std::chrono::steady_clock::now();
  end(h, channel_id, others);
  creator.join();
  const auto latency = returned - ended_at;
  CHECK(latency < std::chrono::seconds(2));
  REQUIRE_FALSE(waited.has_value());
  CHECK(waited.error().kind == ErrorKind::kProtocol);
  CHECK(waited.error().message ==
        "channel '" + channel_id +
            "' closed during handshake: " + std::string(reason));
  CHECK(engine::is_terminal(h.hub->get_channel(channel_id)->state));
  CHECK(h.hub->get_channel(channel_id)->close_reason == reason);
}

TEST_CASE("RACE-06 a reject releases the waiting creator") {
  check_waiter_released("consulting", 1, "invite_rejected",
                        [](WaitingHub& h, const std::string& channel,
                           const std::vector<std::string>& invitees) {
                          h.post_as(invitees[0], channel,
                                    ev::kChannelInviteReject);
                        });
}

TEST_CASE("RACE-06 a partial reject of a discussion releases the creator") {
  check_waiter_released(
      "discussion", 2, "invite_rejected",
      [](WaitingHub& h, const std::string& channel,
         const std::vector<std::string>& invitees) {
        h.post_as(invitees[0], channel, ev::kChannelInviteAck);
        h.post_as(invitees[1], channel, ev::kChannelInviteReject);
      });
}

TEST_CASE("RACE-06 an explicit close releases the waiting creator") {
  check_waiter_released("conversation", 1, "explicit_close",
                        [](WaitingHub& h, const std::string& channel,
                           const std::vector<std::string>&) {
                          CHECK(h.hub->close_channel(channel).has_value());
                        });
}

TEST_CASE("RACE-06 TTL expiry releases the waiting creator") {
  check_waiter_released(
      "conversation", 1, "ttl_expired",
      [](WaitingHub& h, const std::string&, const std::vector<std::string>&) {
        h.clock->advance(std::chrono::hours(3));
        CHECK(h.hub->expire_due().has_value());
      });
}

TEST_CASE(
    "RACE-06 an ack completing concurrently with a close: the creator "
    "gets exactly one outcome") {
  for (int round = 0; round < 10; ++round) {
    CAPTURE(round);
    WaitingHub h;
    const auto alice = h.add("alice");
    const auto bob = h.add("bob");
    engine::Result<ChannelMetadata> waited = engine::protocol_error("unset");
    std::jthread creator([&] {
      waited = h.hub->create_channel({.creator_id = alice,
                                      .manifest_type = "conversation",
                                      .participants = {bob}});
    });
    const std::string channel_id = h.await_pending();
    race(2, [&](int i) {
      if (i == 0) {
        Envelope ack;
        ack.channel_id = channel_id;
        ack.sender_id = bob;
        ack.event_type = std::string(ev::kChannelInviteAck);
        ack.event_data = engine::to_flex(json::object()).value();
        (void)h.hub->post_envelope(std::move(ack));
      } else {
        CHECK(h.hub->close_channel(channel_id).has_value());
      }
    });
    creator.join();
    const auto metadata = h.hub->get_channel(channel_id);
    REQUIRE(metadata.has_value());
    CHECK(metadata->state == ChannelState::kClosed);
    auto types = h.hub->read_wal(channel_id);
    REQUIRE(types.has_value());
    CHECK(types->back().event_type == ev::kChannelClosed);
    if (waited) {
      // The ack won: the channel was active before it closed.
      CHECK(std::ranges::count_if(*types, [](const Envelope& e) {
              return e.event_type == ev::kChannelOpened;
            }) == 1);
    } else {
      CHECK(waited.error().message ==
            "channel '" + channel_id +
                "' closed during handshake: explicit_close");
    }
  }
}

}  // namespace
}  // namespace parley
