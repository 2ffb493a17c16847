// Discussion (spec §5.6): round-robin among 2+ participants; the creator
// speaks first; never closes on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/adapters/channel_adapter.h"

namespace parley::engine {

struct DiscussionState final : AdapterState {
  static constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);

  std::vector<std::string> participant_order;  // by Participant::order
  std::string expected_next_speaker;
  std::optional<std::string> last_speaker_id;
  std::optional<std::string> last_envelope_id;
  std::int64_t turn_count = 0;
  // Position of expected_next_speaker in participant_order, or kNoIndex: a
  // cache that spares fold the search for the usual in-turn sender.
  std::size_t expected_index = kNoIndex;

  std::unique_ptr<AdapterState> clone() const override;
  // {"expected_next_speaker", "last_envelope_id", "last_speaker_id",
  //  "participant_order", "turn_count"}.
  JsonText to_json() const override;
};

// `fold`, `validate_send`, `on_accepted` and `expected_next` require a
// state made by this adapter's initial_state (or a clone of one).
class DiscussionAdapter final : public ChannelAdapter {
 public:
  DiscussionAdapter();

  const ChannelManifest& manifest() const override { return manifest_; }
  Result<std::unique_ptr<AdapterState>> initial_state(
      const ChannelMetadata& metadata) const override;
  // Allocation-free once both ids have been seen once.
  void fold(const EnvelopeView& envelope, AdapterState& state) const override;
  Result<void> validate_create(const ChannelMetadata& metadata) const override;
  Result<void> validate_send(const ChannelMetadata& metadata,
                             const EnvelopeView& envelope,
                             const AdapterState& before) const override;
  AcceptResult on_accepted(const ChannelMetadata& metadata,
                           const EnvelopeView& envelope,
                           const AdapterState& after) const override;
  std::optional<ExpectedTurn> expected_next(
      const ChannelMetadata& metadata,
      const AdapterState& state) const override;
  // NamedWindowedSummary(max(2 * participants, 4)) (spec §5.6).
  ViewPolicy default_view_policy(
      const ChannelMetadata& metadata,
      std::string_view participant_id) const override;

 private:
  ChannelManifest manifest_;
};

// Participant ids sorted by Participant::order (stable), as AG2 snapshots
// them into discussion and workflow state.
std::vector<std::string> participant_order(const ChannelMetadata& metadata);

}  // namespace parley::engine
