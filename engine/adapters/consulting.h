// Consulting: strict one question (from the creator), one reply (from the
// respondent), then closed with `consulting_complete`.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "engine/adapters/channel_adapter.h"

namespace parley::engine {

struct ConsultingState final : AdapterState {
  bool initiator_sent = false;
  bool respondent_replied = false;
  std::optional<std::string> last_envelope_id;

  std::unique_ptr<AdapterState> clone() const override;
  // {"initiator_sent", "last_envelope_id", "respondent_replied"}.
  JsonText to_json() const override;
};

// `fold`, `validate_send`, `on_accepted` and `expected_next` require a
// state made by this adapter's initial_state (or a clone of one).
class ConsultingAdapter final : public ChannelAdapter {
 public:
  ConsultingAdapter();

  const ChannelManifest& manifest() const override { return manifest_; }
  Result<std::unique_ptr<AdapterState>> initial_state(
      const ChannelMetadata& metadata) const override;
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

  // [say] to the creator until it has sent, and to the respondent after
  // the prompt and before the reply; [] otherwise.
  std::vector<ToolOffer> tools_for(
      const ChannelMetadata& metadata, const AdapterState& state,
      std::string_view participant_id) const override;

 private:
  ChannelManifest manifest_;
};

}  // namespace parley::engine
