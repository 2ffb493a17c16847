// ChannelActivity: the folded facts the built-in expectations read agree
// with a scan of the whole channel, for any order of broadcast and directed
// texts, other content and protocol envelopes; a terminal channel drops
// them.
#include "engine/channels/channel_activity.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/event_types.h"
#include "engine/channels/channel_table.h"

namespace parley {
namespace {

using engine::ActivityMark;
using engine::ChannelActivity;

struct Logged {
  std::string sender;
  std::string type;
  std::string created_at;
  std::optional<std::vector<std::string>> audience;
};

// The scan the folded facts replace: the last text `agent` sent, and the
// last text another agent sent that `agent` was shown.
std::optional<std::string> scanned_sent(const std::vector<Logged>& wal,
                                        std::string_view agent) {
  std::optional<std::string> last;
  for (const Logged& envelope : wal) {
    if (envelope.type == engine::event_type::kText &&
        envelope.sender == agent) {
      last = envelope.created_at;
    }
  }
  return last;
}

std::optional<std::string> scanned_seen(const std::vector<Logged>& wal,
                                        std::string_view agent) {
  std::optional<std::string> last;
  for (const Logged& envelope : wal) {
    if (envelope.type != engine::event_type::kText ||
        envelope.sender == agent) {
      continue;
    }
    if (!envelope.audience || std::ranges::find(*envelope.audience, agent) !=
                                  envelope.audience->end()) {
      last = envelope.created_at;
    }
  }
  return last;
}

std::optional<std::string> created_at(const ActivityMark* mark) {
  if (!mark) return std::nullopt;
  return mark->created_at;
}

void fold(ChannelActivity& activity, const Logged& envelope,
          std::uint64_t sequence) {
  std::vector<std::string_view> audience;
  if (envelope.audience) {
    audience.assign(envelope.audience->begin(), envelope.audience->end());
  }
  activity.fold(envelope.sender, envelope.type, envelope.created_at,
                envelope.audience
                    ? std::optional<std::span<const std::string_view>>(audience)
                    : std::nullopt,
                sequence);
}

TEST_CASE("the folded last texts agree with a scan of the whole channel") {
  const std::vector<std::string> agents{"alice", "bob", "carol", "dave"};
  const std::vector<std::string> types{
      std::string(engine::event_type::kText), "acme.custom",
      std::string(engine::event_type::kChannelOpened), "ag2.task.updated",
      std::string(engine::event_type::kExpectationViolated)};
  std::mt19937 random(20261126);
  for (int history = 0; history < 200; ++history) {
    std::vector<Logged> wal;
    ChannelActivity activity;
    const int length = static_cast<int>(random() % 40);
    for (int i = 0; i < length; ++i) {
      Logged envelope{
          .sender = agents[random() % agents.size()],
          .type = types[random() % 3 == 0 ? random() % types.size() : 0],
          .created_at = "t" + std::to_string(i)};
      if (random() % 2 == 0) {
        envelope.audience.emplace();
        for (const std::string& agent : agents) {
          if (random() % 2 == 0) envelope.audience->push_back(agent);
        }
      }
      wal.push_back(envelope);
      fold(activity, envelope, static_cast<std::uint64_t>(i + 1));
    }
    for (const std::string& agent : agents) {
      CAPTURE(history);
      CAPTURE(agent);
      CHECK(created_at(activity.last_text_sent(agent)) ==
            scanned_sent(wal, agent));
      CHECK(created_at(activity.last_text_seen(agent)) ==
            scanned_seen(wal, agent));
    }
  }
}

TEST_CASE("an agent that joins later was shown the earlier broadcasts") {
  ChannelActivity activity;
  fold(activity, {"alice", std::string(engine::event_type::kText), "t1", {}},
       1);
  fold(activity, {"alice", std::string(engine::event_type::kText), "t2", {}},
       2);
  REQUIRE(activity.last_text_seen("erin") != nullptr);
  CHECK(activity.last_text_seen("erin")->created_at == "t2");
  CHECK(activity.last_text_seen("alice") == nullptr);
}

TEST_CASE("last content skips protocol, task and violation envelopes") {
  ChannelActivity activity;
  CHECK_FALSE(activity.last_content().has_value());
  fold(activity, {"alice", "acme.custom", "t1", {}}, 1);
  fold(activity,
       {"hub", std::string(engine::event_type::kChannelOpened), "t2", {}}, 2);
  fold(activity, {"alice", "ag2.task.updated", "t3", {}}, 3);
  fold(activity,
       {"alice",
        std::string(engine::event_type::kExpectationViolated),
        "t4",
        {}},
       4);
  REQUIRE(activity.last_content().has_value());
  CHECK(activity.last_content()->created_at == "t1");
  CHECK(activity.last_content()->sequence == 1);
}

TEST_CASE("a terminal channel keeps no activity") {
  engine::ChannelEntry channel;
  channel.metadata.state = engine::ChannelState::kActive;
  const auto apply = [&channel](std::string_view type, bool hub,
                                std::uint64_t sequence) {
    engine::ChannelTable::apply_envelope(
        channel, {.view = {.sender_id = "alice", .event_type = type},
                  .created_at = "2026-01-01T00:00:00+00:00",
                  .hub_authored = hub,
                  .sequence = sequence});
  };
  apply(engine::event_type::kText, false, 1);
  CHECK(channel.activity.last_content().has_value());
  apply(engine::event_type::kChannelClosed, true, 2);
  CHECK(channel.metadata.state == engine::ChannelState::kClosed);
  CHECK_FALSE(channel.activity.last_content().has_value());
  CHECK(channel.activity.last_text_sent("alice") == nullptr);
}

}  // namespace
}  // namespace parley
