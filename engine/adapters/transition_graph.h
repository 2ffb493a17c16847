// The workflow transition graph: an initial speaker, rules `when condition →
// then target` tried by ascending priority, a default target and an optional
// turn cap. The graph is data (the JSON object of `knobs.graph`); names resolve
// to code through a TransitionRegistry, which tenants extend with their own
// targets and conditions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/base/json_text.h"

namespace parley::engine {

struct WorkflowState;

// Where the next turn goes. The views point into the target, the state or
// the envelope it was resolved against, and live as long as they do.
struct TransitionDecision {
  std::optional<std::string_view> next_speaker;  // nullopt: terminate
  std::string_view close_reason;
};

// When a transition fires. Pure; sees the post-fold state (new turn count,
// last speaker and context) and the accepted envelope.
class TransitionCondition {
 public:
  virtual ~TransitionCondition() = default;
  virtual bool evaluate(const WorkflowState& state,
                        const EnvelopeView& envelope) const = 0;
};

// Where a fired transition sends the next turn. Pure, like conditions.
class TransitionTarget {
 public:
  virtual ~TransitionTarget() = default;
  virtual TransitionDecision resolve(const WorkflowState& state,
                                     const EnvelopeView& envelope) const = 0;
};

// Build a target or condition from its `args` (a JSON object). Failures
// are kInvalid errors whose message becomes the detail of "invalid
// workflow graph: <detail>".
using TargetFactory =
    std::function<Result<std::unique_ptr<const TransitionTarget>>(
        const nlohmann::json& args)>;
using ConditionFactory =
    std::function<Result<std::unique_ptr<const TransitionCondition>>(
        const nlohmann::json& args)>;

// Names → factories. Built-in targets: agent, round_robin, stay,
// revert_to_initiator, terminate; conditions: always, from_speaker,
// tool_called, context_equals. Not thread-safe while being extended;
// share it as const once set up.
class TransitionRegistry {
 public:
  // A registry holding the built-ins.
  TransitionRegistry();

  // The process-wide registry of built-ins only (immutable).
  static std::shared_ptr<const TransitionRegistry> builtin();

  // Registering an existing name replaces it.
  void register_target(std::string name, TargetFactory factory);
  void register_condition(std::string name, ConditionFactory factory);

  // `spec` is {"name": N, "args": {...}} (args optional). A null target
  // spec is terminate("after_work"). Unknown names fail with "no
  // transition target registered for 'N'" / "no transition condition
  // registered for 'N'".
  Result<std::unique_ptr<const TransitionTarget>> make_target(
      const nlohmann::json& spec) const;
  Result<std::unique_ptr<const TransitionCondition>> make_condition(
      const nlohmann::json& spec) const;

 private:
  std::map<std::string, TargetFactory, std::less<>> targets_;
  std::map<std::string, ConditionFactory, std::less<>> conditions_;
};

// Adds the built-in targets and conditions to `registry` (what a new
// TransitionRegistry starts with).
void register_builtin_transitions(TransitionRegistry& registry);

// The built-in `terminate` target: no next speaker, close with `reason`.
std::unique_ptr<const TransitionTarget> terminate_target(std::string reason);

// A loaded graph. Immutable; shared by every state folded from it.
class TransitionGraph {
  struct PrivateTag {};

 public:
  struct Transition {
    std::unique_ptr<const TransitionCondition> when;
    std::unique_ptr<const TransitionTarget> then;
    double priority = 0;
  };

  // Loads a `TransitionGraph.to_dict()` object. Missing `transitions` means
  // none, a missing or null `default_target` means terminate("after_work"),
  // a missing `priority` 0, missing `args` none. Fails (kInvalid) with the
  // detail AG2 reports after "invalid workflow graph: ", e.g. "no
  // transition target registered for 'x'", or "'initial_speaker'" when
  // that key is missing.
  static Result<std::shared_ptr<const TransitionGraph>> load(
      const nlohmann::json& data, const TransitionRegistry& registry);

  explicit TransitionGraph(PrivateTag);
  TransitionGraph(const TransitionGraph&) = delete;
  TransitionGraph& operator=(const TransitionGraph&) = delete;
  ~TransitionGraph();

  // The graph object exactly as loaded (the state's `graph_data`).
  const nlohmann::json& data() const { return *data_; }
  // `initial_speaker` when it is a string; nullopt otherwise.
  const std::optional<std::string>& initial_speaker() const {
    return initial_speaker_;
  }
  // Python repr of `initial_speaker`, for AG2's error messages.
  const std::string& initial_speaker_repr() const {
    return initial_speaker_repr_;
  }
  // By ascending priority; ties keep list order.
  const std::vector<Transition>& transitions() const { return transitions_; }
  const TransitionTarget& default_target() const { return *default_target_; }
  std::optional<double> max_turns() const { return max_turns_; }
  bool max_turns_reached(std::int64_t turn_count) const {
    return max_turns_ && static_cast<double>(turn_count) >= *max_turns_;
  }

  // The first transition whose condition holds decides; else the default.
  TransitionDecision select(const WorkflowState& state,
                            const EnvelopeView& envelope) const;

  // Graph JSON of AG2's factories. round_robin: participants[0] first,
  // always → round_robin, default terminate("round_robin_complete").
  // sequence: steps[i] → steps[i+1] by from_speaker, default
  // terminate("sequence_complete"), max_turns = steps.size(). Fail
  // (kInvalid) on an empty list: "round_robin requires at least 1
  // participant" / "sequence requires at least 1 step".
  static Result<JsonText> round_robin(
      std::span<const std::string> participants,
      std::optional<std::int64_t> max_turns = std::nullopt);
  static Result<JsonText> sequence(std::span<const std::string> steps);

 private:
  std::unique_ptr<const nlohmann::json> data_;
  std::optional<std::string> initial_speaker_;
  std::string initial_speaker_repr_;
  std::vector<Transition> transitions_;
  std::unique_ptr<const TransitionTarget> default_target_;
  std::optional<double> max_turns_;
};

}  // namespace parley::engine
