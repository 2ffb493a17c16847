#include "engine/adapters/workflow.h"

#include <flatbuffers/flexbuffers.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "engine/adapters/discussion.h"
#include "engine/adapters/flex_fields.h"
#include "engine/adapters/state_fields.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/base/python_repr.h"

namespace parley::engine {

namespace {

using nlohmann::json;

const WorkflowState& as_workflow(const AdapterState& state) {
  return static_cast<const WorkflowState&>(state);
}

bool is_substantive(std::string_view type) {
  return type == event_type::kText || type == event_type::kPacket;
}

json parse_knobs(const ChannelMetadata& metadata) {
  json knobs = json::parse(metadata.knobs, nullptr, false);
  return knobs.is_object() ? knobs : json::object();
}

// ---- FlexBuffer reads (no allocation) -------------------------------------

using flex_fields::root_map;
using flex_fields::string_of;

// Python falsiness of a decoded value (what `x or {}` skips).
bool flex_falsy(flexbuffers::Reference value) {
  if (value.IsNull()) return true;
  if (value.IsVector()) return value.AsVector().size() == 0;  // maps too
  if (value.IsTypedVector()) return value.AsTypedVector().size() == 0;
  if (value.IsString()) return value.AsString().size() == 0;
  if (value.IsBool()) return !value.AsBool();
  return false;
}

// ---- context updates (Python dict semantics) -------------------------------

// `for key in keys: vars.pop(key, None)`: a string yields its characters,
// a list its elements, a dict its keys.
void apply_delete(json& vars, const json* keys) {
  if (keys == nullptr) return;
  if (keys->is_string()) {
    const auto& text = keys->get_ref<const std::string&>();
    for (std::size_t i = 0; i < text.size();) {
      const auto lead = static_cast<unsigned char>(text[i]);
      std::size_t length = lead < 0x80             ? 1
                           : (lead & 0xe0) == 0xc0 ? 2
                           : (lead & 0xf0) == 0xe0 ? 3
                           : (lead & 0xf8) == 0xf0 ? 4
                                                   : 1;
      length = std::min(length, text.size() - i);
      vars.erase(text.substr(i, length));
      i += length;
    }
  } else if (keys->is_array()) {
    for (const json& key : *keys) {
      if (key.is_string()) vars.erase(key.get_ref<const std::string&>());
    }
  } else if (keys->is_object()) {
    for (const auto& [key, value] : keys->items()) vars.erase(key);
  }
}

// `vars.update(values)`: a dict, or a list of [key, value] pairs.
void apply_set(json& vars, const json* values) {
  if (values == nullptr) return;
  if (values->is_object()) {
    for (const auto& [key, value] : values->items()) vars[key] = value;
  } else if (values->is_array()) {
    for (const json& pair : *values) {
      if (pair.is_array() && pair.size() == 2 && pair[0].is_string()) {
        vars[pair[0].get_ref<const std::string&>()] = pair[1];
      }
    }
  }
}

const json* member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// `{"delete": [...], "set": {...}}` at `updates` in event_data: delete
// first, then set.
void apply_updates(json& vars, const EnvelopeView& envelope,
                   const flexbuffers::Map& updates, std::string_view key) {
  const auto [remove, set] = flex_fields::find(
      updates, std::array<std::string_view, 2>{"delete", "set"});
  if (flex_falsy(remove) && flex_falsy(set)) return;
  const json data = flex_to_json(envelope.event_data);
  const json* shaped = key.empty() ? &data : member(data, key);
  if (shaped == nullptr) return;
  apply_delete(vars, member(*shaped, "delete"));
  apply_set(vars, member(*shaped, "set"));
}

// A packet's fields this adapter reads, in key order.
struct PacketFields {
  flexbuffers::Reference context;
  flexbuffers::Reference context_updates;
  flexbuffers::Reference routing;
};

PacketFields packet_fields(const flexbuffers::Map& packet) {
  const auto [context, updates, routing] = flex_fields::find(
      packet,
      std::array<std::string_view, 3>{"context", "context_updates", "routing"});
  return {context, updates, routing};
}

void apply_packet_context(json& vars, const EnvelopeView& envelope,
                          const PacketFields& packet) {
  const auto& updates = packet.context_updates;
  if (!updates.IsNull()) {
    if (updates.IsMap()) {
      apply_updates(vars, envelope, updates.AsMap(), "context_updates");
    }
    return;
  }
  const auto& context = packet.context;
  if (context.IsMap() && context.AsMap().size() > 0) {
    const json data = flex_to_json(envelope.event_data);
    apply_set(vars, member(data, "context"));
  }
}

// Finish and targeted hand-off packets decide the next speaker themselves;
// returns false when the graph must decide.
bool route_packet(WorkflowState& state, const PacketFields& packet) {
  if (!packet.routing.IsMap()) return false;
  const auto [kind_field, reason_field, target_field] = flex_fields::find(
      packet.routing.AsMap(),
      std::array<std::string_view, 3>{"kind", "reason", "target"});
  const auto kind = string_of(kind_field);
  if (!kind) return false;
  if (*kind == "finish") {
    const auto reason = string_of(reason_field);
    state.expected_next_speaker.reset();
    state.pending_close_reason.assign(reason && !reason->empty() ? *reason
                                                                 : "finished");
    return true;
  }
  if (*kind == "handoff") {
    const auto target = string_of(target_field);
    if (target && !target->empty()) {
      assign(state.expected_next_speaker, *target);
      return true;
    }
  }
  return false;
}

// ---- packet text: "[Handed off via <tool>] <reason>", then the body ------

constexpr char32_t kMalformed = 0xffffffff;

std::size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) == 0xc0) return 2;
  if ((lead & 0xf0) == 0xe0) return 3;
  if ((lead & 0xf8) == 0xf0) return 4;
  return 1;
}

// The code point `sequence` encodes, or kMalformed.
char32_t decode_utf8(std::string_view sequence) {
  const auto lead = static_cast<unsigned char>(sequence[0]);
  if (utf8_length(lead) != sequence.size()) return kMalformed;
  if (sequence.size() == 1) return lead < 0x80 ? lead : kMalformed;
  char32_t code = lead & (0x7f >> sequence.size());
  for (std::size_t i = 1; i < sequence.size(); ++i) {
    code = (code << 6) | (static_cast<unsigned char>(sequence[i]) & 0x3f);
  }
  return code;
}

// What Python's str.strip() removes.
bool python_space(char32_t code) {
  return (code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x20) ||
         code == 0x85 || code == 0xa0 || code == 0x1680 ||
         (code >= 0x2000 && code <= 0x200a) || code == 0x2028 ||
         code == 0x2029 || code == 0x202f || code == 0x205f || code == 0x3000;
}

// Python's `text.strip()` on UTF-8 text.
std::string_view python_strip(std::string_view text) {
  while (!text.empty()) {
    const std::size_t length =
        std::min(utf8_length(static_cast<unsigned char>(text[0])), text.size());
    if (!python_space(decode_utf8(text.substr(0, length)))) break;
    text.remove_prefix(length);
  }
  while (!text.empty()) {
    std::size_t start = text.size() - 1;
    while (start > 0 && text.size() - start < 4 &&
           (static_cast<unsigned char>(text[start]) & 0xc0) == 0x80) {
      --start;
    }
    if (!python_space(decode_utf8(text.substr(start)))) break;
    text.remove_suffix(text.size() - start);
  }
  return text;
}

// A string field's text; empty when absent or not a string.
std::string_view string_or_empty(flexbuffers::Reference value) {
  return string_of(value).value_or(std::string_view());
}

// A hand-off packet's line "[Handed off via <tool>] <reason>" (stripped;
// tool and reason default to empty), then the body if non-empty, joined by
// a newline; nullopt when both are empty.
std::optional<std::string> packet_text(const EnvelopeView& envelope) {
  const auto root = root_map(envelope.event_data);
  if (!root) return std::nullopt;
  const auto [body, routing] = flex_fields::find(
      *root, std::array<std::string_view, 2>{"body", "routing"});
  std::string text;
  if (routing.IsMap()) {
    const auto [kind, reason, tool] = flex_fields::find(
        routing.AsMap(),
        std::array<std::string_view, 3>{"kind", "reason", "tool"});
    if (string_of(kind) == "handoff") {
      std::string line = "[Handed off via ";
      line.append(string_or_empty(tool)).append("] ");
      line.append(string_or_empty(reason));
      text.assign(python_strip(line));
    }
  }
  const std::string_view body_text = string_or_empty(body);
  if (!body_text.empty()) {
    if (!text.empty()) text.push_back('\n');
    text.append(body_text);
  }
  if (text.empty()) return std::nullopt;
  return text;
}

}  // namespace

// ---- WorkflowState ----------------------------------------------------------

WorkflowState::WorkflowState()
    : context_vars(std::make_unique<json>(json::object())) {}

WorkflowState::WorkflowState(const WorkflowState& other)
    : AdapterState(other),
      participant_order(other.participant_order),
      expected_next_speaker(other.expected_next_speaker),
      last_speaker_id(other.last_speaker_id),
      last_envelope_id(other.last_envelope_id),
      turn_count(other.turn_count),
      pending_close_reason(other.pending_close_reason),
      creator_id(other.creator_id),
      graph(other.graph),
      context_vars(std::make_unique<json>(*other.context_vars)) {}

WorkflowState::~WorkflowState() = default;

std::unique_ptr<AdapterState> WorkflowState::clone() const {
  return std::make_unique<WorkflowState>(*this);
}

JsonText WorkflowState::to_json() const {
  return state_text(
      json{{"participant_order", participant_order},
           {"expected_next_speaker", nullable(expected_next_speaker)},
           {"last_speaker_id", nullable(last_speaker_id)},
           {"last_envelope_id", nullable(last_envelope_id)},
           {"turn_count", turn_count},
           {"pending_close_reason", pending_close_reason},
           {"creator_id", creator_id},
           {"graph_data", graph ? graph->data() : json::object()},
           {"context_vars", *context_vars}});
}

// ---- WorkflowAdapter --------------------------------------------------------

WorkflowAdapter::WorkflowAdapter(
    std::shared_ptr<const TransitionRegistry> registry)
    : registry_(std::move(registry)) {
  manifest_.type = "workflow";
  manifest_.version = 1;
  manifest_.participants = {.min = 2, .max = std::nullopt, .roles = {}};
  manifest_.knobs_schema = {{"graph", "TransitionGraph"}};
  manifest_.default_view_policy = "named_windowed_summary";
  manifest_.expectations = {
      {.name = "turn_within",
       .on_violation = "warn",
       .params = R"({"seconds":120})"},
      {.name = "turn_within",
       .on_violation = "auto_close",
       .params = R"({"seconds":600})"},
  };
}

Result<std::shared_ptr<const TransitionGraph>> WorkflowAdapter::load_graph(
    const json& knobs) const {
  const json* data = member(knobs, "graph");
  if (data == nullptr || !data->is_object()) {
    return protocol_error(
        "workflow requires knobs['graph'] as a dict \xe2\x80\x94 call "
        "TransitionGraph.to_dict() before passing");
  }
  auto graph = TransitionGraph::load(*data, *registry_);
  if (!graph) {
    return protocol_error("invalid workflow graph: " + graph.error().message);
  }
  return graph;
}

Result<std::unique_ptr<AdapterState>> WorkflowAdapter::initial_state(
    const ChannelMetadata& metadata) const {
  const json knobs = parse_knobs(metadata);
  auto graph = load_graph(knobs);
  if (!graph) return std::unexpected(graph.error());
  auto order = participant_order(metadata);
  const auto& initial = (*graph)->initial_speaker();
  if (!initial || std::ranges::find(order, *initial) == order.end()) {
    return protocol_error("workflow initial_speaker " +
                          (*graph)->initial_speaker_repr() +
                          " not in participants " + python_repr_list(order));
  }
  const json* context = member(knobs, "context_vars");
  if (context != nullptr && !context->is_object()) {
    return protocol_error(
        "workflow knobs['context_vars'] must be a dict if provided");
  }
  auto state = std::make_unique<WorkflowState>();
  state->participant_order = std::move(order);
  state->expected_next_speaker = *initial;
  state->creator_id = metadata.creator_id;
  state->graph = std::move(*graph);
  if (context != nullptr) *state->context_vars = *context;
  return state;
}

void WorkflowAdapter::fold(const EnvelopeView& envelope,
                           AdapterState& state) const {
  auto& workflow = static_cast<WorkflowState&>(state);
  const bool is_packet = envelope.event_type == event_type::kPacket;
  if (!is_packet && envelope.event_type != event_type::kText) {
    if (envelope.event_type == event_type::kContextSet) {
      if (auto root = root_map(envelope.event_data)) {
        apply_updates(*workflow.context_vars, envelope, *root, {});
      }
    }
    return;
  }
  std::optional<PacketFields> packet;
  if (is_packet) {
    if (auto root = root_map(envelope.event_data)) {
      packet = packet_fields(*root);
      apply_packet_context(*workflow.context_vars, envelope, *packet);
    }
  }
  assign(workflow.last_speaker_id, envelope.sender_id);
  assign(workflow.last_envelope_id, envelope.envelope_id);
  ++workflow.turn_count;
  workflow.pending_close_reason.clear();
  if (packet && route_packet(workflow, *packet)) return;

  const TransitionDecision decision =
      workflow.graph->select(workflow, envelope);
  if (decision.next_speaker) {
    assign(workflow.expected_next_speaker, *decision.next_speaker);
  } else {
    workflow.expected_next_speaker.reset();
  }
  workflow.pending_close_reason.assign(decision.close_reason);
}

Result<void> WorkflowAdapter::validate_create(
    const ChannelMetadata& metadata) const {
  if (metadata.participants.size() < 2) {
    return protocol_error("workflow requires at least 2 participants, got " +
                          std::to_string(metadata.participants.size()));
  }
  auto graph = load_graph(parse_knobs(metadata));
  if (!graph) return std::unexpected(graph.error());
  const auto& initial = (*graph)->initial_speaker();
  if (!initial || !metadata.has_participant(*initial)) {
    std::set<std::string> ids;
    for (const auto& participant : metadata.participants) {
      ids.insert(participant.agent_id);
    }
    const std::vector<std::string> sorted(ids.begin(), ids.end());
    return protocol_error("workflow initial_speaker " +
                          (*graph)->initial_speaker_repr() +
                          " not in participants " + python_repr_list(sorted));
  }
  return {};
}

Result<void> WorkflowAdapter::validate_send(const ChannelMetadata& metadata,
                                            const EnvelopeView& envelope,
                                            const AdapterState& before) const {
  if (envelope.event_type == event_type::kContextSet) {
    if (!metadata.has_participant(envelope.sender_id)) {
      return protocol_error(
          "workflow " + python_repr(metadata.channel_id) +
          " only accepts EV_CONTEXT_SET from participants, got " +
          python_repr(envelope.sender_id));
    }
    return {};
  }
  if (!is_substantive(envelope.event_type)) return {};
  const auto& expected = as_workflow(before).expected_next_speaker;
  if (expected && !expected->empty() && envelope.sender_id != *expected) {
    return protocol_error("workflow " + python_repr(metadata.channel_id) +
                          " expects " + python_repr(*expected) +
                          " to speak, got " + python_repr(envelope.sender_id));
  }
  return {};
}

AcceptResult WorkflowAdapter::on_accepted(const ChannelMetadata&,
                                          const EnvelopeView& envelope,
                                          const AdapterState& after) const {
  if (!is_substantive(envelope.event_type)) return {};
  const auto& state = as_workflow(after);
  if (!state.expected_next_speaker) {
    return {.next_state = ChannelState::kClosed,
            .auto_close_reason = state.pending_close_reason.empty()
                                     ? "workflow_terminated"
                                     : state.pending_close_reason};
  }
  if (state.graph && state.graph->max_turns_reached(state.turn_count)) {
    return {.next_state = ChannelState::kClosed,
            .auto_close_reason = "max_turns"};
  }
  return {};
}

std::optional<ExpectedTurn> WorkflowAdapter::expected_next(
    const ChannelMetadata&, const AdapterState& state) const {
  const auto& workflow = as_workflow(state);
  if (!workflow.expected_next_speaker) return std::nullopt;
  return ExpectedTurn{.agent_id = *workflow.expected_next_speaker,
                      .triggering_envelope_id = workflow.last_envelope_id};
}

std::optional<std::string> WorkflowAdapter::render_envelope(
    const EnvelopeView& envelope) const {
  if (envelope.event_type != event_type::kPacket) {
    return ChannelAdapter::render_envelope(envelope);
  }
  return packet_text(envelope);
}

ViewPolicy WorkflowAdapter::default_view_policy(const ChannelMetadata& metadata,
                                                std::string_view) const {
  const auto participants =
      static_cast<std::int64_t>(metadata.participants.size());
  return *ViewPolicy::named_windowed_summary(
      std::max<std::int64_t>(2 * participants, 4));
}

namespace {

// Whether some `tool_called` condition of `graph` names `tool`.
bool graph_routes_tool(const TransitionGraph& graph, std::string_view tool) {
  const auto transitions = graph.data().find("transitions");
  if (transitions == graph.data().end() || !transitions->is_array()) {
    return false;
  }
  for (const json& transition : *transitions) {
    const json& when = transition.value("when", json());
    if (!when.is_object() || when.value("name", json()) != "tool_called") {
      continue;
    }
    const json& args = when.value("args", json());
    if (args.is_object() && args.value("tool_name", json()) == tool) {
      return true;
    }
  }
  return false;
}

// The call's JSON "reason" argument when it is a string, else "".
std::string reason_argument(const ToolCallOutcome& call) {
  const json arguments = json::parse(call.arguments, nullptr, false);
  if (!arguments.is_object()) return "";
  const auto reason = arguments.find("reason");
  if (reason == arguments.end() || !reason->is_string()) return "";
  return reason->get<std::string>();
}

}  // namespace

std::optional<Envelope> WorkflowAdapter::build_round_envelope(
    const ChannelMetadata& metadata, std::string_view sender_id,
    const RoundReply& reply, const AdapterState& state) const {
  const auto& workflow = static_cast<const WorkflowState&>(state);
  json routing = {{"kind", "text"}};
  for (const ToolCallOutcome& call : reply.tool_calls) {
    if (call.finish) {
      routing = {{"kind", "finish"},
                 {"tool", call.name},
                 {"reason", call.finish->reason},
                 {"summary", call.finish->summary}};
      break;
    }
    if (call.handoff) {
      routing = {{"kind", "handoff"},
                 {"tool", call.name},
                 {"reason", call.handoff->reason},
                 {"target", call.handoff->target}};
      break;
    }
    if (workflow.graph && graph_routes_tool(*workflow.graph, call.name)) {
      routing = {{"kind", "handoff"},
                 {"tool", call.name},
                 {"reason", reason_argument(call)}};
      break;
    }
  }
  if (routing["kind"] == "text" && reply.body.empty()) return std::nullopt;
  const json data = {
      {"routing", std::move(routing)},
      {"context_updates", {{"set", json::object()}, {"delete", json::array()}}},
      {"body", reply.body}};
  auto flex = to_flex(data);
  // Strings, objects and empty containers always encode; a failure is a bug.
  if (!flex) throw std::logic_error("to_flex: " + flex.error().message);
  Envelope envelope;
  envelope.channel_id = metadata.channel_id;
  envelope.sender_id = std::string(sender_id);
  envelope.event_type = std::string(event_type::kPacket);
  envelope.event_data = std::move(*flex);
  return envelope;
}

}  // namespace parley::engine
