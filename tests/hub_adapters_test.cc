// Custom adapters through the hub, and channels whose adapter is gone
// (readable but dormant until it is registered again and the hub reopened).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "engine/base/event_types.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using namespace engine;

struct TallyState final : AdapterState {
  std::int64_t texts = 0;
  std::unique_ptr<AdapterState> clone() const override {
    return std::make_unique<TallyState>(*this);
  }
  JsonText to_json() const override {
    return nlohmann::json{{"texts", texts}}.dump();
  }
};

// Counts texts; closes itself with "tally_done" at the third.
class TallyAdapter final : public ChannelAdapter {
 public:
  TallyAdapter() { manifest_.type = "tally"; }
  const ChannelManifest& manifest() const override { return manifest_; }
  Result<std::unique_ptr<AdapterState>> initial_state(
      const ChannelMetadata&) const override {
    return std::make_unique<TallyState>();
  }
  void fold(const EnvelopeView& envelope, AdapterState& state) const override {
    if (envelope.event_type == event_type::kText) {
      ++static_cast<TallyState&>(state).texts;
    }
  }
  Result<void> validate_create(const ChannelMetadata&) const override {
    return {};
  }
  Result<void> validate_send(const ChannelMetadata&, const EnvelopeView&,
                             const AdapterState&) const override {
    return {};
  }
  AcceptResult on_accepted(const ChannelMetadata&, const EnvelopeView&,
                           const AdapterState& after) const override {
    if (static_cast<const TallyState&>(after).texts < 3) return {};
    return {ChannelState::kClosed, "tally_done"};
  }
  std::optional<ExpectedTurn> expected_next(
      const ChannelMetadata&, const AdapterState&) const override {
    return std::nullopt;
  }

 private:
  ChannelManifest manifest_;
};

TEST_CASE(
    "a custom adapter folds, closes its channel and is refolded after "
    "restart") {
  testing::TestHub t({std::make_shared<TallyAdapter>()});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "tally", {bob});
  REQUIRE(channel.has_value());
  CHECK(channel->manifest.type == "tally");
  const auto& id = channel->channel_id;
  REQUIRE(t.say(id, alice, "1").has_value());
  REQUIRE(t.say(id, bob, "2").has_value());
  t.restart();
  CHECK(t.state(id)["texts"] == 2);
  REQUIRE(t.say(id, alice, "3").has_value());
  auto closed = t.hub().get_channel(id);
  CHECK(closed->state == ChannelState::kClosed);
  CHECK(closed->close_reason == "tally_done");
  CHECK(t.wal_types(id).back() == event_type::kChannelClosed);
}

TEST_CASE(
    "a channel whose adapter is no longer registered is readable but dormant") {
  testing::TestHub t({std::make_shared<TallyAdapter>()});
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "tally", {bob});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  REQUIRE(t.say(id, alice, "1").has_value());
  t.set_adapters({});
  t.restart();
  auto metadata = t.hub().get_channel(id);
  REQUIRE(metadata.has_value());
  CHECK(metadata->state == ChannelState::kActive);
  CHECK(t.wal(id).size() == 4);
  CHECK(t.state(id).is_null());
  CHECK_FALSE(t.hub().can_send(id, alice));
  auto refused = t.say(id, bob, "2");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message ==
        "channel '" + id + "' has no registered adapter (manifest 'tally'@v1)");
  CHECK(t.wal(id).size() == 4);
  t.set_adapters({std::make_shared<TallyAdapter>()});
  t.restart();
  CHECK(t.state(id)["texts"] == 1);
  CHECK(t.say(id, bob, "2").has_value());
}

}  // namespace
}  // namespace parley
