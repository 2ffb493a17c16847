// The built-in transition targets (agent, round_robin, stay,
// revert_to_initiator, terminate) and conditions (always, from_speaker,
// tool_called, context_equals).
#include <flatbuffers/flexbuffers.h>

#include <algorithm>
#include <array>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/adapters/flex_fields.h"
#include "engine/adapters/transition_graph.h"
#include "engine/adapters/workflow.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"

namespace parley::engine {

namespace {

using nlohmann::json;

// A built-in's constructor arguments, as Python's dataclass declares them.
struct Signature {
  std::string_view kind;  // "target" | "condition"
  std::string_view name;
  std::vector<std::string_view> required;
  std::vector<std::string_view> optional;
};

// Python's cls(**args): every required name present, no unknown names.
Result<void> check_args(const Signature& signature, const json& args) {
  const auto prefix =
      std::string(signature.kind) + " '" + std::string(signature.name) + "' ";
  for (std::string_view key : signature.required) {
    if (!args.contains(key)) {
      return invalid(prefix + "missing required argument '" + std::string(key) +
                     "'");
    }
  }
  for (const auto& [key, value] : args.items()) {
    if (std::ranges::find(signature.required, key) ==
            signature.required.end() &&
        std::ranges::find(signature.optional, key) ==
            signature.optional.end()) {
      return invalid(prefix + "got an unexpected argument '" + key + "'");
    }
  }
  return {};
}

// The argument as a string, nullopt for null; fails for other types.
Result<std::optional<std::string>> string_or_null(std::string_view kind,
                                                  std::string_view name,
                                                  const json& args,
                                                  std::string_view key) {
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) {
    return invalid(std::string(kind) + " '" + std::string(name) +
                   "' argument '" + std::string(key) + "' must be a string");
  }
  return it->get<std::string>();
}

std::optional<std::string> string_if(const json& args, std::string_view key) {
  auto it = args.find(key);
  if (it == args.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::string_view anchor_of(const WorkflowState& state,
                           const EnvelopeView& envelope) {
  if (state.last_speaker_id && !state.last_speaker_id->empty()) {
    return *state.last_speaker_id;
  }
  return envelope.sender_id;
}

// ---- targets -------------------------------------------------------------

class AgentTarget final : public TransitionTarget {
 public:
  explicit AgentTarget(std::optional<std::string> agent_id)
      : agent_id_(std::move(agent_id)) {}
  TransitionDecision resolve(const WorkflowState&,
                             const EnvelopeView&) const override {
    if (!agent_id_) return {};
    return {.next_speaker = *agent_id_};
  }

 private:
  std::optional<std::string> agent_id_;
};

class RoundRobinTarget final : public TransitionTarget {
 public:
  TransitionDecision resolve(const WorkflowState& state,
                             const EnvelopeView& envelope) const override {
    const auto& order = state.participant_order;
    if (order.empty()) return {.close_reason = "no_participants"};
    const std::string_view anchor = anchor_of(state, envelope);
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i] == anchor) {
        return {.next_speaker = order[i + 1 == order.size() ? 0 : i + 1]};
      }
    }
    return {.next_speaker = order.front()};
  }
};

class StayTarget final : public TransitionTarget {
 public:
  TransitionDecision resolve(const WorkflowState& state,
                             const EnvelopeView& envelope) const override {
    return {.next_speaker = anchor_of(state, envelope)};
  }
};

class RevertToInitiatorTarget final : public TransitionTarget {
 public:
  TransitionDecision resolve(const WorkflowState& state,
                             const EnvelopeView&) const override {
    return {.next_speaker = state.creator_id};
  }
};

class TerminateTarget final : public TransitionTarget {
 public:
  explicit TerminateTarget(std::string reason) : reason_(std::move(reason)) {}
  TransitionDecision resolve(const WorkflowState&,
                             const EnvelopeView&) const override {
    return {.close_reason = reason_};
  }

 private:
  std::string reason_;
};

// ---- conditions ----------------------------------------------------------

class AlwaysCondition final : public TransitionCondition {
 public:
  bool evaluate(const WorkflowState&, const EnvelopeView&) const override {
    return true;
  }
};

class FromSpeakerCondition final : public TransitionCondition {
 public:
  explicit FromSpeakerCondition(std::optional<std::string> agent_id)
      : agent_id_(std::move(agent_id)) {}
  bool evaluate(const WorkflowState&,
                const EnvelopeView& envelope) const override {
    return agent_id_ && envelope.sender_id == *agent_id_;
  }

 private:
  std::optional<std::string> agent_id_;  // nullopt: not a string, never
};

// Python's `routing.get("tool") == tool_name` on a packet.
class ToolCalledCondition final : public TransitionCondition {
 public:
  explicit ToolCalledCondition(const json& tool_name)
      : tool_name_(tool_name), name_(string_if_value(tool_name)) {}
  bool evaluate(const WorkflowState&,
                const EnvelopeView& envelope) const override {
    if (envelope.event_type != event_type::kPacket) return false;
    flexbuffers::Reference tool;  // null
    if (auto root = flex_fields::root_map(envelope.event_data)) {
      const auto [routing] =
          flex_fields::find(*root, std::array<std::string_view, 1>{"routing"});
      if (routing.IsMap()) {
        tool = flex_fields::find(routing.AsMap(),
                                 std::array<std::string_view, 1>{"tool"})[0];
      }
    }
    if (name_) return flex_fields::string_of(tool) == *name_;
    if (tool_name_.is_null()) return tool.IsNull();
    // Rare: a non-string tool name compares by Python equality.
    const json data = flex_to_json(envelope.event_data);
    const json* routing = nullptr;
    if (data.is_object()) {
      auto it = data.find("routing");
      if (it != data.end() && it->is_object()) routing = &*it;
    }
    json value = nullptr;
    if (routing != nullptr) {
      auto it = routing->find("tool");
      if (it != routing->end()) value = *it;
    }
    return python_equal(value, tool_name_);
  }

 private:
  static std::optional<std::string> string_if_value(const json& value) {
    if (!value.is_string()) return std::nullopt;
    return value.get<std::string>();
  }

  json tool_name_;
  std::optional<std::string> name_;
};

// Python's `context_vars.get(key) == value`; a missing key is None.
class ContextEqualsCondition final : public TransitionCondition {
 public:
  ContextEqualsCondition(std::optional<std::string> key, json value)
      : key_(std::move(key)), value_(std::move(value)) {}
  bool evaluate(const WorkflowState& state,
                const EnvelopeView&) const override {
    static const json kNone = nullptr;
    const json* found = &kNone;
    if (key_ && state.context_vars) {
      auto it = state.context_vars->find(*key_);
      if (it != state.context_vars->end()) found = &*it;
    }
    return python_equal(*found, value_);
  }

 private:
  std::optional<std::string> key_;  // nullopt: not a string, never present
  json value_;
};

constexpr std::string_view kTarget = "target";
constexpr std::string_view kCondition = "condition";

// A factory that checks the arguments against `signature`, then calls
// `make(args)`.
template <typename Base, typename Make>
auto checked(Signature signature, Make make) {
  return [signature = std::move(signature),
          make](const json& args) -> Result<std::unique_ptr<const Base>> {
    if (auto ok = check_args(signature, args); !ok) {
      return std::unexpected(ok.error());
    }
    return make(args);
  };
}

template <typename T>
std::unique_ptr<const T> plain(const json&) {
  return std::make_unique<const T>();
}

Result<std::unique_ptr<const TransitionTarget>> make_agent(const json& args) {
  auto agent_id = string_or_null(kTarget, "agent", args, "agent_id");
  if (!agent_id) return std::unexpected(agent_id.error());
  return std::make_unique<const AgentTarget>(std::move(*agent_id));
}

Result<std::unique_ptr<const TransitionTarget>> make_terminate(
    const json& args) {
  if (!args.contains("reason")) {
    return std::make_unique<const TerminateTarget>("after_work");
  }
  auto reason = string_or_null(kTarget, "terminate", args, "reason");
  if (!reason) return std::unexpected(reason.error());
  return std::make_unique<const TerminateTarget>(reason->value_or(""));
}

}  // namespace

std::unique_ptr<const TransitionTarget> terminate_target(std::string reason) {
  return std::make_unique<const TerminateTarget>(std::move(reason));
}

void register_builtin_transitions(TransitionRegistry& registry) {
  using Target = TransitionTarget;
  using Condition = TransitionCondition;
  registry.register_target(
      "agent", checked<Target>({kTarget, "agent", {"agent_id"}}, make_agent));
  registry.register_target(
      "round_robin",
      checked<Target>({kTarget, "round_robin"}, plain<RoundRobinTarget>));
  registry.register_target(
      "stay", checked<Target>({kTarget, "stay"}, plain<StayTarget>));
  registry.register_target("revert_to_initiator",
                           checked<Target>({kTarget, "revert_to_initiator"},
                                           plain<RevertToInitiatorTarget>));
  registry.register_target(
      "terminate",
      checked<Target>({kTarget, "terminate", {}, {"reason"}}, make_terminate));

  registry.register_condition(
      "always",
      checked<Condition>({kCondition, "always"}, plain<AlwaysCondition>));
  registry.register_condition(
      "from_speaker",
      checked<Condition>({kCondition, "from_speaker", {"agent_id"}},
                         [](const json& args) {
                           return std::make_unique<const FromSpeakerCondition>(
                               string_if(args, "agent_id"));
                         }));
  registry.register_condition(
      "tool_called",
      checked<Condition>({kCondition, "tool_called", {"tool_name"}},
                         [](const json& args) {
                           return std::make_unique<const ToolCalledCondition>(
                               args.at("tool_name"));
                         }));
  registry.register_condition(
      "context_equals",
      checked<Condition>(
          {kCondition, "context_equals", {"key", "value"}},
          [](const json& args) {
            return std::make_unique<const ContextEqualsCondition>(
                string_if(args, "key"), args.at("value"));
          }));
}

}  // namespace parley::engine
