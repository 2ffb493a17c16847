// replay/: folding a store without a hub, re-folding one channel up to a
// sequence, state hashes, and the JSON of every record kind.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "engine/json/records_json.h"
#include "log/rocksdb_log_store.h"
#include "replay/channel_replay.h"
#include "replay/folded_store.h"
#include "replay/record_json.h"
#include "replay/state_hash.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using nlohmann::json;
using replay::ChannelReplay;
using replay::FoldedStore;

struct Conversation {
  testing::TestHub hub;
  std::string alice, bob, channel;

  Conversation() {
    alice = hub.add_agent("alice");
    bob = hub.add_agent("bob");
    auto opened = hub.open(alice, "conversation", {bob});
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    channel = opened->channel_id;
    REQUIRE(hub.say(channel, alice, "hi").has_value());
    REQUIRE(hub.say(channel, bob, "hello").has_value());
  }

  std::uint64_t channel_hash() {
    auto replayed = ChannelReplay::run(hub.hub().store(), channel);
    REQUIRE_MESSAGE(replayed.has_value(), testing::error_message(replayed));
    return replay::channel_state_hash((*replayed)->channel());
  }

  std::uint64_t store_hash() {
    auto folded = FoldedStore::fold(hub.hub().store());
    REQUIRE_MESSAGE(folded.has_value(), testing::error_message(folded));
    return replay::store_state_hash((*folded)->state());
  }
};

TEST_CASE("state hashes are stable across two folds of the same log") {
  Conversation c;
  CHECK(c.channel_hash() == c.channel_hash());
  CHECK(c.store_hash() == c.store_hash());
  CHECK(replay::hash_hex(c.channel_hash()).size() == 16);
}

TEST_CASE("state hashes are stable across a restart of the hub") {
  Conversation c;
  const std::uint64_t channel = c.channel_hash();
  const std::uint64_t store = c.store_hash();
  c.hub.restart();
  CHECK(c.channel_hash() == channel);
  CHECK(c.store_hash() == store);
}

TEST_CASE("state hashes change when a post lands") {
  Conversation c;
  const std::uint64_t channel = c.channel_hash();
  const std::uint64_t store = c.store_hash();
  REQUIRE(c.hub.say(c.channel, c.alice, "one more").has_value());
  CHECK(c.channel_hash() != channel);
  CHECK(c.store_hash() != store);
}

TEST_CASE("a replayed channel has the live hub's metadata and adapter state") {
  Conversation c;
  auto replayed = ChannelReplay::run(c.hub.hub().store(), c.channel);
  REQUIRE(replayed.has_value());
  const engine::ChannelEntry& channel = (*replayed)->channel();
  auto live = c.hub.hub().get_channel(c.channel);
  REQUIRE(live.has_value());
  CHECK(engine::to_json(channel.metadata) == engine::to_json(*live));
  REQUIRE(channel.state != nullptr);
  CHECK(json::parse(channel.state->to_json()) == c.hub.state(c.channel));
  CHECK(channel.last_sequence == c.hub.wal(c.channel).size());
}

TEST_CASE("replay --at folds the channel up to that sequence only") {
  Conversation c;
  const std::size_t total = c.hub.wal(c.channel).size();
  REQUIRE(total >= 4);  // invite, ack, opened, hi, hello
  std::vector<std::uint64_t> step_sequences;
  std::vector<std::uint64_t> step_hashes;
  auto full = ChannelReplay::run(
      c.hub.hub().store(), c.channel, log::kLastSequence,
      [&](const engine::Envelope& envelope, const engine::ChannelEntry& after) {
        step_sequences.push_back(envelope.sequence);
        step_hashes.push_back(replay::channel_state_hash(after));
      });
  REQUIRE(full.has_value());
  REQUIRE(step_sequences.size() == total);
  for (std::uint64_t at = 1; at <= total; ++at) {
    CAPTURE(at);
    CHECK(step_sequences[at - 1] == at);
    auto partial = ChannelReplay::run(c.hub.hub().store(), c.channel, at);
    REQUIRE(partial.has_value());
    CHECK((*partial)->channel().last_sequence == at);
    CHECK(replay::channel_state_hash((*partial)->channel()) ==
          step_hashes[at - 1]);
  }
  auto created = ChannelReplay::run(c.hub.hub().store(), c.channel, 0);
  REQUIRE(created.has_value());
  CHECK((*created)->channel().metadata.state == engine::ChannelState::kPending);
  CHECK((*created)->channel().last_sequence == 0);
  auto past_end = ChannelReplay::run(c.hub.hub().store(), c.channel, 1000);
  REQUIRE(past_end.has_value());
  CHECK((*past_end)->channel().metadata.state == engine::ChannelState::kActive);
  CHECK((*past_end)->channel().last_sequence == total);
}

TEST_CASE("replaying an unknown channel fails not-found") {
  Conversation c;
  auto missing = ChannelReplay::run(c.hub.hub().store(), "no-such-channel");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == engine::ErrorKind::kNotFound);
  CHECK(missing.error().message == "channel not found: no-such-channel");
}

TEST_CASE("a folded store up to a log sequence stops there") {
  Conversation c;
  auto all = FoldedStore::fold(c.hub.hub().store());
  REQUIRE(all.has_value());
  CHECK((*all)->last_log_sequence() == c.hub.hub().store().last_sequence());
  CHECK((*all)->state().registry.size() == 2);
  auto first = FoldedStore::fold(c.hub.hub().store(), 1);
  REQUIRE(first.has_value());
  CHECK((*first)->last_log_sequence() == 1);
  CHECK((*first)->state().registry.size() == 1);
  CHECK((*first)->state().channels.in_order().empty());
}

TEST_CASE("advance folds what was appended after the first fold") {
  Conversation c;
  auto folded = FoldedStore::fold(c.hub.hub().store());
  REQUIRE(folded.has_value());
  const std::string carol = c.hub.add_agent("carol");
  REQUIRE(c.hub.say(c.channel, c.bob, "later").has_value());
  CHECK((*folded)->state().registry.find(carol) == nullptr);
  REQUIRE((*folded)->advance(c.hub.hub().store()).has_value());
  CHECK((*folded)->state().registry.find(carol) != nullptr);
  CHECK((*folded)->last_log_sequence() == c.hub.hub().store().last_sequence());
  auto again = FoldedStore::fold(c.hub.hub().store());
  REQUIRE(again.has_value());
  CHECK(replay::store_state_hash((*folded)->state()) ==
        replay::store_state_hash((*again)->state()));
}

TEST_CASE("a read-only fold beside the live hub equals the hub's own fold") {
  Conversation c;
  const std::uint64_t live = c.store_hash();
  const std::filesystem::path data = c.hub.data() / "store";
  auto reader = log::open_rocksdb_log_store_read_only(data);
  REQUIRE_MESSAGE(reader.has_value(), testing::error_message(reader));
  auto folded = FoldedStore::fold(**reader);
  REQUIRE(folded.has_value());
  CHECK(replay::store_state_hash((*folded)->state()) == live);
}

// A discussion of alice, bob and carol in which alice opened and bob, given
// the turn, stayed silent for 600 s: turn_within fired and hid him (an
// ExpectationFired record, outside the channel index).
struct DiscussionHidingBob {
  testing::TestHub hub;
  std::string alice = hub.add_agent("alice");
  std::string bob = hub.add_agent("bob");
  std::string carol = hub.add_agent("carol");
  std::string channel;
  std::uint64_t opening = 0;  // alice's post, by channel sequence

  DiscussionHidingBob() {
    auto opened = hub.open(alice, "discussion", {bob, carol});
    REQUIRE(opened.has_value());
    channel = opened->channel_id;
    REQUIRE(hub.say(channel, alice, "opening").has_value());
    opening = hub.wal(channel).back().sequence;
    hub.clock().advance(std::chrono::seconds(600));
    REQUIRE(hub.hub().tick_expectations().has_value());
  }
};

TEST_CASE("replaying a discussion folds the hide its expectation fired") {
  DiscussionHidingBob d;
  auto& hub = d.hub;
  const std::string& bob = d.bob;
  const std::string& channel = d.channel;
  const std::uint64_t opening = d.opening;
  REQUIRE(hub.say(channel, d.carol, "carol here").has_value());
  REQUIRE(hub.state(channel)["hidden_participants"] == json::array({bob}));
  auto adapter_state = [](const ChannelReplay& replayed) {
    return json::parse(std::string(replayed.channel().state->to_json()));
  };

  auto all = ChannelReplay::run(hub.hub().store(), channel);
  REQUIRE(all.has_value());
  CHECK(adapter_state(**all)["hidden_participants"] == json::array({bob}));
  auto folded = FoldedStore::fold(hub.hub().store());
  REQUIRE(folded.has_value());
  CHECK(replay::channel_state_hash((*all)->channel()) ==
        replay::channel_state_hash(*(*folded)->state().channels.find(channel)));
  // Before alice's post nothing had fired.
  auto before = ChannelReplay::run(hub.hub().store(), channel, opening - 1);
  REQUIRE(before.has_value());
  CHECK_FALSE(adapter_state(**before).contains("hidden_participants"));
}

TEST_CASE("an ExpectationFired record renders every field") {
  DiscussionHidingBob d;
  std::vector<json> fired;
  REQUIRE(d.hub.hub()
              .store()
              .read(1, log::kLastSequence,
                    [&](std::uint64_t sequence, std::string_view r) {
                      json record = replay::record_to_json(sequence, r);
                      if (record["kind"] == "ExpectationFired") {
                        fired.push_back(std::move(record));
                      }
                      return true;
                    })
              .has_value());
  REQUIRE_FALSE(fired.empty());
  for (const json& record : fired) {
    CHECK(record["channel_id"] == d.channel);
    CHECK(record["expectation_index"].is_number_unsigned());
    CHECK(record["at"].is_string());
    CHECK(record["expectation"].is_string());
    CHECK(record["on_violation"].is_string());
    CHECK(record["hides_violator"].is_boolean());
  }
  // The one that hid bob says so.
  auto hid = std::ranges::find(fired, true, [](const json& record) {
    return record["hides_violator"].get<bool>();
  });
  REQUIRE(hid != fired.end());
  CHECK((*hid)["violator_id"] == d.bob);
  CHECK((*hid)["expectation"] == "turn_within");
  CHECK((*hid)["on_violation"] == "hide");
}

TEST_CASE("every record renders as JSON with its kind and log sequence") {
  Conversation c;
  REQUIRE(c.hub.hub()
              .acknowledge(c.bob, c.channel,
                           c.hub.wal(c.channel).back().envelope_id)
              .has_value());
  REQUIRE(c.hub.hub().close_channel(c.channel, "done").has_value());
  std::set<std::string> kinds;
  std::uint64_t expected = 1;
  auto read = c.hub.hub().store().read(
      1, log::kLastSequence, [&](std::uint64_t sequence, std::string_view r) {
        json record = replay::record_to_json(sequence, r);
        CHECK(record["log_sequence"] == expected++);
        const std::string kind = record["kind"];
        kinds.insert(kind);
        if (kind == "Envelope") {
          CHECK(record["envelope"]["channel_id"] == c.channel);
          CHECK(record["channel_sequence"].get<std::uint64_t>() >= 1);
          CHECK(record["hub_authored"].is_boolean());
        } else if (kind == "ChannelCreated") {
          CHECK(record["metadata"]["channel_id"] == c.channel);
          CHECK(record["metadata"]["state"] == "pending");
        } else if (kind == "AgentRegistered") {
          CHECK(record["passport"]["name"].is_string());
          CHECK(record["agent_id"].is_string());
        } else if (kind == "CursorAdvanced") {
          CHECK(record["agent_id"] == c.bob);
          CHECK(record["channel_id"] == c.channel);
        }
        return true;
      });
  REQUIRE(read.has_value());
  for (const char* kind :
       {"AgentRegistered", "ChannelCreated", "CursorAdvanced", "Envelope"}) {
    CHECK(kinds.contains(kind));
  }
}

TEST_CASE("the store hash covers a remote_agent's owners") {
  testing::TestHub t;
  const auto alice = t.add_agent("alice");
  auto relay =
      t.hub().register_identity({.name = "relay", .kind = "remote_agent"}, {},
                                std::nullopt, std::nullopt, {alice});
  REQUIRE(relay.has_value());
  auto folded = FoldedStore::fold(t.hub().store());
  REQUIRE_MESSAGE(folded.has_value(), testing::error_message(folded));
  const std::string text = replay::canonical_store_text((*folded)->state());
  CHECK(text.find("\nowner " + alice + "\n") != std::string::npos);
}

}  // namespace
}  // namespace parley
