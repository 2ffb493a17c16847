// The background sweeper (engine/hub/sweeper.h): EXP-14 (expectations fire
// without a manual tick), LIM-14 (custom periodic workers), TTL expiry, and
// failure isolation between workers. These run on the real steady clock;
// the hub's own clock stays the manual one.
#include "engine/hub/sweeper.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "engine/adapters/builtin_adapters.h"
#include "tests/expectation_support.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using namespace std::chrono_literals;
using engine::Sweeper;
using nlohmann::json;
using testing::TestHub;

std::shared_ptr<const engine::ChannelAdapter> restless_conversation() {
  for (auto& adapter : engine::builtin_adapters()) {
    if (adapter->manifest().type == "conversation") {
      return std::make_shared<testing::ExpectingAdapter>(
          adapter, "restless",
          std::vector<engine::ExpectationSpec>{{.name = "max_silence",
                                                .on_violation = "audit",
                                                .params = R"({"seconds":0})"}});
    }
  }
  FAIL("no conversation adapter");
  return nullptr;
}

// Polls `done` every 5 ms until it holds or `limit` passes.
template <typename Done>
bool eventually(Done done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return done();
}

TEST_CASE("EXP-14 the background sweeper actually runs") {
  TestHub t({restless_conversation()});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  Sweeper sweeper(t.hub(), {.ttl_interval = 0ms, .expectation_interval = 50ms});
  REQUIRE(sweeper.start().has_value());
  auto channel = t.open(alice, "restless", {bob});
  REQUIRE(channel.has_value());
  std::this_thread::sleep_for(250ms);
  auto fired = [&] {
    std::size_t count = 0;
    for (const auto& record : t.audit()) {
      if (record["kind"] == "expectation_violated" &&
          record["channel_id"] == channel->channel_id &&
          record["expectation"] == "max_silence") {
        ++count;
      }
    }
    return count;
  };
  // 250 ms is five intervals; a loaded machine gets a little more slack.
  CHECK(eventually([&] { return fired() >= 1; }, 2000ms));
  sweeper.stop();
  CHECK(fired() == 1);
}

TEST_CASE("LIM-14 a custom worker runs periodically until unregistered") {
  TestHub t;
  Sweeper sweeper(t.hub(), {.ttl_interval = 0ms, .expectation_interval = 0ms});
  REQUIRE(sweeper.start().has_value());
  std::atomic<int> runs = 0;
  REQUIRE(sweeper.register_worker("tick", 0.05s, [&] { ++runs; }).has_value());
  std::this_thread::sleep_for(160ms);
  // Three intervals fit in 160 ms; slack for a loaded machine.
  CHECK(eventually([&] { return runs >= 2; }, 2000ms));
  sweeper.unregister_worker("tick");
  const int at_unregister = runs;
  std::this_thread::sleep_for(200ms);
  CHECK(runs <= at_unregister + 1);
}

TEST_CASE("LIM-14 a worker name is registered once") {
  TestHub t;
  Sweeper sweeper(t.hub());
  REQUIRE(sweeper.register_worker("dup", 1s, [] {}).has_value());
  auto again = sweeper.register_worker("dup", 1s, [] {});
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().kind == engine::ErrorKind::kInvalid);
  CHECK(again.error().message == "sweeper already registered: 'dup'");
}

TEST_CASE("LIM-14 a worker interval must be positive") {
  TestHub t;
  Sweeper sweeper(t.hub());
  for (double seconds : {0.0, -1.0}) {
    auto refused = sweeper.register_worker(
        "bad", std::chrono::duration<double>(seconds), [] {});
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().message.find("positive") != std::string::npos);
  }
}

TEST_CASE("a worker that throws keeps its schedule and spares the others") {
  TestHub t;
  Sweeper sweeper(t.hub(), {.ttl_interval = 0ms, .expectation_interval = 0ms});
  std::atomic<int> failing = 0;
  std::atomic<int> healthy = 0;
  REQUIRE(sweeper
              .register_worker("failing", 20ms,
                               [&] {
                                 ++failing;
                                 throw std::runtime_error("worker broke");
                               })
              .has_value());
  REQUIRE(
      sweeper.register_worker("healthy", 20ms, [&] { ++healthy; }).has_value());
  REQUIRE(sweeper.start().has_value());
  CHECK(eventually([&] { return failing >= 3 && healthy >= 3; }, 3000ms));
  sweeper.stop();
}

TEST_CASE("the sweeper's TTL worker expires due channels") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob}, json::object(),
                        engine::DurationSpec(std::int64_t{60}));
  REQUIRE(channel.has_value());
  t.clock().advance(std::chrono::seconds(61));
  Sweeper sweeper(t.hub(), {.ttl_interval = 20ms, .expectation_interval = 0ms});
  REQUIRE(sweeper.start().has_value());
  CHECK(eventually(
      [&] {
        return t.hub().get_channel(channel->channel_id)->state ==
               engine::ChannelState::kExpired;
      },
      3000ms));
  sweeper.stop();
  CHECK(t.hub().get_channel(channel->channel_id)->close_reason ==
        "ttl_expired");
}

TEST_CASE("a stopped sweeper can start again") {
  TestHub t;
  Sweeper sweeper(t.hub(), {.ttl_interval = 0ms, .expectation_interval = 0ms});
  std::atomic<int> runs = 0;
  REQUIRE(sweeper.register_worker("again", 20ms, [&] { ++runs; }).has_value());
  REQUIRE(sweeper.start().has_value());
  CHECK_FALSE(sweeper.start().has_value());
  CHECK(eventually([&] { return runs >= 1; }, 2000ms));
  sweeper.stop();
  const int stopped_at = runs;
  std::this_thread::sleep_for(60ms);
  CHECK(runs == stopped_at);
  REQUIRE(sweeper.start().has_value());
  CHECK(eventually([&] { return runs > stopped_at; }, 2000ms));
}

}  // namespace
}  // namespace parley
