// A hello's replay against the live notifies racing it, without sockets.
#include "engine/transport/replay_order.h"

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/transport/frame_codec.h"

namespace parley {
namespace {

using transport::ReplayOrder;
using Live = ReplayOrder::Live;

engine::Envelope envelope(std::string channel, std::string id) {
  engine::Envelope made;
  made.channel_id = std::move(channel);
  made.envelope_id = std::move(id);
  made.sender_id = "alice";
  made.event_type = "ag2.msg.text";
  return made;
}

std::shared_ptr<const engine::Envelope> live(std::string channel,
                                             std::string id) {
  return std::make_shared<const engine::Envelope>(
      envelope(std::move(channel), std::move(id)));
}

// What an order sends, as "channel/id".
struct Sent {
  std::vector<std::string> ids;
  auto sink() {
    return [this](const std::shared_ptr<const engine::Envelope>& sent) {
      ids.push_back(sent->channel_id + "/" + sent->envelope_id);
    };
  }
};

TEST_CASE("without a replay a live notify is sent at once") {
  ReplayOrder order({});
  Sent sent;
  CHECK(order.live(live("c", "1"), "bob", sent.sink()) == Live::kSent);
  CHECK(sent.ids == std::vector<std::string>{"c/1"});
}

TEST_CASE(
    "live notifies wait for the replay under way and follow it in order, "
    "without what it carried") {
  ReplayOrder order({});
  Sent sent;
  order.begin("bob");
  CHECK(order.live(live("c", "2"), "bob", sent.sink()) == Live::kHeld);
  CHECK(order.live(live("d", "1"), "bob", sent.sink()) == Live::kHeld);
  CHECK(order.live(live("c", "3"), "bob", sent.sink()) == Live::kHeld);
  // Another agent's notifies are not held.
  CHECK(order.live(live("c", "2"), "carol", sent.sink()) == Live::kSent);
  CHECK(sent.ids == std::vector<std::string>{"c/2"});
  sent.ids.clear();
  const std::vector<engine::Envelope> replayed = {envelope("c", "1"),
                                                  envelope("c", "2")};
  order.end("bob", replayed, sent.sink());
  CHECK(sent.ids == std::vector<std::string>{"d/1", "c/3"});
}

TEST_CASE(
    "a live notify of an envelope the replay carried is dropped after it, "
    "and the first one above it ends the check") {
  ReplayOrder order({});
  Sent sent;
  order.begin("bob");
  const std::vector<engine::Envelope> replayed = {envelope("c", "1"),
                                                  envelope("c", "2")};
  order.end("bob", replayed, sent.sink());
  CHECK(sent.ids.empty());
  CHECK(order.live(live("c", "2"), "bob", sent.sink()) == Live::kDuplicate);
  CHECK(order.live(live("d", "1"), "bob", sent.sink()) == Live::kSent);
  CHECK(order.live(live("c", "3"), "bob", sent.sink()) == Live::kSent);
  // The floor is gone: the order no longer looks at bob's notifies.
  CHECK(order.live(live("c", "1"), "bob", sent.sink()) == Live::kSent);
  CHECK(sent.ids == std::vector<std::string>{"d/1", "c/3", "c/1"});
}

TEST_CASE(
    "overlapping replays to one agent release what is held once both end") {
  ReplayOrder order({});
  Sent sent;
  order.begin("bob");
  order.begin("bob");
  CHECK(order.live(live("c", "5"), "bob", sent.sink()) == Live::kHeld);
  order.end("bob", {}, sent.sink());
  CHECK(sent.ids.empty());
  CHECK(order.live(live("c", "6"), "bob", sent.sink()) == Live::kHeld);
  const std::vector<engine::Envelope> replayed = {envelope("c", "5")};
  order.end("bob", replayed, sent.sink());
  CHECK(sent.ids == std::vector<std::string>{"c/6"});
}

TEST_CASE("holding past the send queue's limits is refused") {
  const auto one = live("c", "1");
  ReplayOrder by_frames({.max_frames = 2});
  Sent sent;
  by_frames.begin("bob");
  CHECK(by_frames.live(one, "bob", sent.sink()) == Live::kHeld);
  CHECK(by_frames.live(live("c", "2"), "bob", sent.sink()) == Live::kHeld);
  CHECK(by_frames.live(live("c", "3"), "bob", sent.sink()) == Live::kOverflow);

  ReplayOrder by_bytes(
      {.max_bytes = 2 * transport::notify_size_estimate(*one)});
  by_bytes.begin("bob");
  CHECK(by_bytes.live(one, "bob", sent.sink()) == Live::kHeld);
  CHECK(by_bytes.live(live("c", "2"), "bob", sent.sink()) == Live::kHeld);
  CHECK(by_bytes.live(live("c", "3"), "bob", sent.sink()) == Live::kOverflow);
  CHECK(sent.ids.empty());
}

}  // namespace
}  // namespace parley
