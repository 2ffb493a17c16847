// Workflow: turns follow a TransitionGraph kept in `knobs.graph`; packets can
// hand off or finish; participants share context variables.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/adapters/channel_adapter.h"
#include "engine/adapters/transition_graph.h"

namespace parley::engine {

struct WorkflowState final : AdapterState {
  WorkflowState();
  // Deep-copies context_vars; shares the (immutable) graph.
  WorkflowState(const WorkflowState& other);
  WorkflowState& operator=(const WorkflowState&) = delete;
  ~WorkflowState() override;

  std::vector<std::string> participant_order;        // by Participant::order
  std::optional<std::string> expected_next_speaker;  // nullopt: terminated
  std::optional<std::string> last_speaker_id;
  std::optional<std::string> last_envelope_id;
  std::int64_t turn_count = 0;
  std::string pending_close_reason;
  std::string creator_id;
  // Never null in a state made by WorkflowAdapter::initial_state.
  std::shared_ptr<const TransitionGraph> graph;
  // Always a JSON object.
  std::unique_ptr<nlohmann::json> context_vars;

  std::unique_ptr<AdapterState> clone() const override;
  // AG2's field names; `graph_data` is the knobs graph object as given.
  JsonText to_json() const override;
};

// `fold`, `validate_send`, `on_accepted` and `expected_next` require a
// state made by this adapter's initial_state (or a clone of one).
//
// Deliberate difference from AG2: a packet's context changes are read
// from `context_updates` ({"set": {...}, "delete": [...]}) or, when that
// key is absent or null, from `context` (a plain set-map, as AG2's packet
// helper writes it).
class WorkflowAdapter final : public ChannelAdapter {
 public:
  // Graph names resolve through `registry` (the built-ins by default).
  explicit WorkflowAdapter(std::shared_ptr<const TransitionRegistry> registry =
                               TransitionRegistry::builtin());

  const ChannelManifest& manifest() const override { return manifest_; }
  // Fails with AG2's protocol errors: graph not an object, graph invalid,
  // initial_speaker not a participant, context_vars not an object.
  Result<std::unique_ptr<AdapterState>> initial_state(
      const ChannelMetadata& metadata) const override;
  // Texts and packets without context changes fold without allocating once
  // the ids have been seen; context changes go through nlohmann::json.
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
  // Packets render as "packet text": a stripped "[Handed off via <tool>]
  // <reason>" line for a handoff, then the body; nullopt when both are empty.
  // Everything else as the default. A packet's non-string body, tool or reason
  // counts as absent.
  std::optional<std::string> render_envelope(
      const EnvelopeView& envelope) const override;
  // NamedWindowedSummary(max(2 * participants, 4)).
  ViewPolicy default_view_policy(
      const ChannelMetadata& metadata,
      std::string_view participant_id) const override;

  // No tools (tools_for keeps the default []): routing is the agent's own
  // tools. The round envelope is an `ag2.packet`: the first tool call (in
  // emission order) whose outcome is a Finish gives routing {"kind":
  // "finish", "tool", "reason", "summary"}, a Handoff {"kind": "handoff",
  // "tool", "reason", "target"}, or whose name some `tool_called` condition
  // of the graph names {"kind": "handoff", "tool", "reason": its "reason"
  // argument or ""}; otherwise {"kind": "text"}, and nothing is posted
  // when the body is empty too. context_updates is always {"set": {},
  // "delete": []}.
  std::optional<Envelope> build_round_envelope(
      const ChannelMetadata& metadata, std::string_view sender_id,
      const RoundReply& reply, const AdapterState& state) const override;

 private:
  Result<std::shared_ptr<const TransitionGraph>> load_graph(
      const nlohmann::json& knobs) const;

  std::shared_ptr<const TransitionRegistry> registry_;
  ChannelManifest manifest_;
};

}  // namespace parley::engine
