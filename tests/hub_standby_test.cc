// A standby hub (Hub::open_standby): it folds a read-only view of the log
// a live hub writes, follows what that hub appends, and once it takes the
// log over it is that hub: same registry, channels and WALs, and it goes
// on writing after the last record. RocksDB here (a secondary beside the
// writer); the PostgreSQL failover with processes is in
// postgres_failover_test.
#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "engine/base/flex_json.h"
#include "engine/hub/hub.h"
#include "engine/json/records_json.h"
#include "log/memory_log_store.h"
#include "log/rocksdb_log_store.h"
#include "tests/hub_fixture.h"
#include "tests/test_support.h"

namespace parley {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// What a client sees of `hub`: agents, channels, and each channel's WAL.
json view_of(const engine::Hub& hub) {
  json out;
  for (const auto& passport : hub.list_agents({})) {
    out["agents"].push_back(engine::to_json(passport));
  }
  for (const auto& channel :
       hub.list_channels(std::nullopt, std::nullopt, 1000)) {
    json entry = engine::to_json(channel);
    auto wal = hub.read_wal(channel.channel_id);
    REQUIRE(wal.has_value());
    for (const auto& envelope : *wal) {
      entry["wal"].push_back(engine::to_json(envelope));
    }
    out["channels"].push_back(std::move(entry));
  }
  return out;
}

std::unique_ptr<engine::Hub> open_standby(const std::filesystem::path& data) {
  auto view = log::open_rocksdb_log_store_read_only(data);
  REQUIRE_MESSAGE(view.has_value(), testing::error_message(view));
  auto hub = engine::Hub::open_standby({.store = std::move(*view)});
  REQUIRE_MESSAGE(hub.has_value(), testing::error_message(hub));
  return std::move(*hub);
}

TEST_CASE(
    "a standby folds what the live hub wrote, follows what it appends, and "
    "taking the log over is that hub") {
  testing::TestHub live;
  const std::string alice = live.add_agent("alice");
  const std::string bob = live.add_agent("bob");
  auto channel = live.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  REQUIRE(live.say(channel->channel_id, alice, "one"));

  auto standby = open_standby(live.data() / "store");
  CHECK(view_of(*standby) == view_of(live.hub()));

  REQUIRE(live.say(channel->channel_id, bob, "two"));
  live.add_agent("carol");
  const std::uint64_t written = live.hub().store().last_sequence();
  std::uint64_t folded = 0;
  for (int i = 0; i < 50 && folded < written; ++i) {
    auto followed = standby->follow(100ms);
    REQUIRE_MESSAGE(followed.has_value(), testing::error_message(followed));
    folded = *followed;
  }
  CHECK(folded == written);
  CHECK(view_of(*standby) == view_of(live.hub()));

  // The live hub goes away; the standby takes the log over.
  const json last_seen = view_of(live.hub());
  REQUIRE(live.hub().close());
  auto writable = log::open_rocksdb_log_store(live.data() / "store");
  REQUIRE_MESSAGE(writable.has_value(), testing::error_message(writable));
  auto taken = standby->take_over(std::move(writable->store));
  REQUIRE_MESSAGE(taken.has_value(), testing::error_message(taken));
  CHECK(view_of(*standby) == last_seen);

  engine::Envelope three;
  three.channel_id = channel->channel_id;
  three.sender_id = alice;
  three.event_type = "ag2.msg.text";
  three.event_data = engine::to_flex(json{{"text", "three"}}).value();
  auto posted = standby->post_envelope(std::move(three));
  REQUIRE_MESSAGE(posted.has_value(), testing::error_message(posted));
  auto wal = standby->read_wal(channel->channel_id);
  REQUIRE(wal.has_value());
  REQUIRE(wal->size() >= 3);
  CHECK(wal->back().envelope_id == *posted);
  CHECK(wal->back().sequence == (*wal)[wal->size() - 2].sequence + 1);
  CHECK(standby->store().last_sequence() == written + 1);
  REQUIRE(standby->close());
}

TEST_CASE("follow() and take_over() are a standby's alone, take_over() once") {
  testing::TestHub live;
  CHECK_FALSE(live.hub().follow(0ms).has_value());
  CHECK_FALSE(live.hub().take_over(log::make_memory_log_store()).has_value());

  auto standby = open_standby(live.data() / "store");
  REQUIRE(live.hub().close());
  auto writable = log::open_rocksdb_log_store(live.data() / "store");
  REQUIRE(writable.has_value());
  REQUIRE(standby->take_over(std::move(writable->store)));
  auto again = standby->take_over(log::make_memory_log_store());
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message == "take_over(): this hub is not a standby");
  CHECK_FALSE(standby->follow(0ms).has_value());
  REQUIRE(standby->close());
}

}  // namespace
}  // namespace parley
