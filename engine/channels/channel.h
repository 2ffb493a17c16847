// Channel data: the manifest snapshot and the metadata AG2 returns. In Parley
// the metadata is a projection folded from the log.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/json_text.h"

namespace parley::engine {

struct ExpectationSpec {
  std::string name;
  std::string on_violation;
  JsonText params = "{}";
  std::optional<JsonText> applies_to;
};

// The data half of an adapter, snapshotted into each channel at creation.
struct ChannelManifest {
  std::string type;
  std::int64_t version = 1;
  struct Participants {
    std::int64_t min = 2;
    std::optional<std::int64_t> max;
    std::vector<std::string> roles;
  } participants;
  // name -> type hint, in declaration order.
  std::vector<std::pair<std::string, std::string>> knobs_schema;
  std::string default_view_policy = "full_transcript";
  std::vector<ExpectationSpec> expectations;
};

enum class ChannelState { kPending, kActive, kClosing, kClosed, kExpired };

// "pending", "active", "closing", "closed", "expired".
std::string_view to_string(ChannelState state);
std::optional<ChannelState> channel_state_from(std::string_view text);

constexpr bool is_terminal(ChannelState state) {
  return state == ChannelState::kClosed || state == ChannelState::kExpired;
}

struct Participant {
  std::string agent_id;
  std::string role;  // "initiator" | "respondent" | "participant"
  std::int64_t order = 0;
  std::string joined_at;
};

struct ChannelMetadata {
  std::string channel_id;
  ChannelManifest manifest;
  std::string creator_id;
  std::vector<Participant> participants;  // creator included, by order
  ChannelState state = ChannelState::kPending;
  std::string created_at;
  std::optional<std::string> expires_at;
  std::optional<std::string> closed_at;
  std::string close_reason;
  std::optional<std::string> parent_channel_id;
  JsonText knobs = "{}";
  JsonText labels = "{}";
  std::optional<std::int64_t> required_acks;
  std::vector<std::string> pending_acks;
  std::vector<std::string> rejected_by;

  bool has_participant(std::string_view agent_id) const;
  // The participant with `role`, or nullptr.
  const Participant* find_role(std::string_view role) const;
};

}  // namespace parley::engine
