// Conversation: free-form two-party channel; never closes on its own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/adapters/channel_adapter.h"

namespace parley::engine {

struct ConversationState final : AdapterState {
  std::int64_t turn_count = 0;
  std::optional<std::string> last_speaker_id;
  std::optional<std::string> last_envelope_id;

  std::unique_ptr<AdapterState> clone() const override;
  // {"last_envelope_id", "last_speaker_id", "turn_count"}.
  JsonText to_json() const override;
};

// `fold`, `validate_send`, `on_accepted` and `expected_next` require a
// state made by this adapter's initial_state (or a clone of one).
class ConversationAdapter final : public ChannelAdapter {
 public:
  ConversationAdapter();

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
  // WindowedSummary(10).
  ViewPolicy default_view_policy(
      const ChannelMetadata& metadata,
      std::string_view participant_id) const override;

  // [say] to every participant, always.
  std::vector<ToolOffer> tools_for(
      const ChannelMetadata& metadata, const AdapterState& state,
      std::string_view participant_id) const override;

 private:
  ChannelManifest manifest_;
};

}  // namespace parley::engine
