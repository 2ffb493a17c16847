// Discussion: round-robin among 2+ participants; the creator speaks first;
// never closes on its own.
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
  // Participants a `hide` expectation firing took out of the turn order,
  // in firing order (Parley; AG2's hide handler is inert).
  std::vector<std::string> hidden;

  std::unique_ptr<AdapterState> clone() const override;
  // {"expected_next_speaker", "last_envelope_id", "last_speaker_id",
  //  "participant_order", "turn_count"}, and "hidden_participants" once a
  //  participant is hidden.
  JsonText to_json() const override;

  // The first participant after position `index` in the turn order that is
  // not hidden (order[index + 1] when everyone is hidden).
  std::size_t next_after(std::size_t index) const;
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
  bool on_accepted_reads_state() const override { return false; }
  std::optional<ExpectedTurn> expected_next(
      const ChannelMetadata& metadata,
      const AdapterState& state) const override;
  // Skips `participant_id` from now on; if it holds the turn, the turn
  // passes to the next participant not hidden.
  void hide(std::string_view participant_id,
            AdapterState& state) const override;
  // NamedWindowedSummary(max(2 * participants, 4)).
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
