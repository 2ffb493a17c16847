// The adapter contract: the protocol that governs one channel type. Adapters
// are pure: no I/O, no clock, no randomness; everything they need is in the
// metadata, the envelope and the state. The hub calls them on its writer (one
// mutation at a time); const members may be called from any thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/adapters/round.h"
#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/channels/channel.h"
#include "engine/views/view_policy.h"

namespace parley::engine {

// One channel's folded adapter state. Each adapter defines its own.
class AdapterState {
 public:
  virtual ~AdapterState() = default;
  virtual std::unique_ptr<AdapterState> clone() const = 0;
  // The state as AG2 reports it (`adapter_state`): compact JSON with AG2's
  // field names.
  virtual JsonText to_json() const = 0;
};

// What an accepted post asks of the channel: the hub applies `next_state`
// (with `auto_close_reason` when terminal) after the post is delivered.
struct AcceptResult {
  std::optional<ChannelState> next_state;
  std::string auto_close_reason;
};

// Who must act next, and the envelope that gave it the turn (what
// `pending_turns_for` reports).
struct ExpectedTurn {
  std::string agent_id;
  std::optional<std::string> triggering_envelope_id;
};

class ChannelAdapter {
 public:
  virtual ~ChannelAdapter() = default;

  // The data half, snapshotted into every channel created with it.
  virtual const ChannelManifest& manifest() const = 0;

  // The empty state of a new channel. May snapshot metadata-derived facts,
  // because fold() receives no metadata. Fails with a protocol error when
  // the metadata cannot give a state (workflow `context_vars`).
  virtual Result<std::unique_ptr<AdapterState>> initial_state(
      const ChannelMetadata& metadata) const = 0;

  // Folds one envelope of the channel's log into `state`, in place. Sees
  // every envelope (invites, acks, hub lifecycle envelopes included) and
  // must ignore what is not its business. Deterministic.
  virtual void fold(const EnvelopeView& envelope,
                    AdapterState& state) const = 0;

  // Refuses a channel at creation (protocol error with AG2's message).
  virtual Result<void> validate_create(
      const ChannelMetadata& metadata) const = 0;

  // Refuses a send before it is logged (protocol error with AG2's message).
  virtual Result<void> validate_send(const ChannelMetadata& metadata,
                                     const EnvelopeView& envelope,
                                     const AdapterState& before) const = 0;

  // Decides transitions after `envelope` was folded into `after`.
  virtual AcceptResult on_accepted(const ChannelMetadata& metadata,
                                   const EnvelopeView& envelope,
                                   const AdapterState& after) const = 0;
  // False when on_accepted never reads its `after` state: the hub then
  // passes the state before the envelope instead of folding a copy.
  virtual bool on_accepted_reads_state() const { return true; }

  virtual std::optional<ExpectedTurn> expected_next(
      const ChannelMetadata& metadata, const AdapterState& state) const = 0;

  // Folds a `hide` expectation firing (engine/expectations): from now on
  // `participant_id` is skipped in the turn order. Deterministic, like
  // fold(). The default: adapters without a turn order ignore it.
  virtual void hide(std::string_view /*participant_id*/,
                    AdapterState& /*state*/) const {}

  // The text models see for `envelope`, or nullopt to leave it out of every
  // view. The default: an `ag2.msg.text` whose event_data.text is a string
  // gives that string (the empty string included); anything else gives nullopt.
  // Pure.
  virtual std::optional<std::string> render_envelope(
      const EnvelopeView& envelope) const;

  // The view `participant_id` gets by default in a channel of this type
  // (engine/views/view_policy.h). The default: the full transcript.
  virtual ViewPolicy default_view_policy(const ChannelMetadata& metadata,
                                         std::string_view participant_id) const;

  // --- Client-side helpers -------------------------------------------------
  // Called by an agent's handler (engine/client/), never by the hub. Pure.

  // The prompt for the next speaker when the view renders nothing for
  // `envelope`, or nullopt. The default: the render_envelope default rule.
  virtual std::optional<std::string> extract_turn_input(
      const EnvelopeView& envelope) const;

  // The tools `participant_id`'s model is offered for one turn, given the
  // channel's folded `state`. The default: none.
  virtual std::vector<ToolOffer> tools_for(
      const ChannelMetadata& metadata, const AdapterState& state,
      std::string_view participant_id) const;

  // The envelope `sender_id` posts at the end of its turn (the caller sets
  // causation_id), or nullopt for a silent round. The default: an
  // `ag2.msg.text` of reply.body, audience null; nullopt when the body is
  // empty.
  virtual std::optional<Envelope> build_round_envelope(
      const ChannelMetadata& metadata, std::string_view sender_id,
      const RoundReply& reply, const AdapterState& state) const;
};

// An unposted `ag2.msg.text` with event_data {"text": text} (AG2's
// build_text_envelope); the hub stamps envelope_id and created_at.
// `audience` nullopt broadcasts.
Envelope build_text_envelope(
    std::string channel_id, std::string sender_id, std::string_view text,
    std::optional<std::vector<std::string>> audience = std::nullopt,
    std::optional<std::string> causation_id = std::nullopt);

// The default rule of ChannelAdapter::render_envelope, without copying:
// event_data.text of an `ag2.msg.text` when it is a string, else nullopt.
// The view points into envelope.event_data.
std::optional<std::string_view> message_text(const EnvelopeView& envelope);

}  // namespace parley::engine
