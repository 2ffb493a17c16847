#include "engine/adapters/transition_graph.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "engine/adapters/workflow.h"
#include "engine/base/python_repr.h"

namespace parley::engine {

namespace {

using nlohmann::json;

constexpr std::string_view kTarget = "target";
constexpr std::string_view kCondition = "condition";

// Reads {"name": N, "args": {...}}: the name (as given) and the args.
struct Spec {
  const json* name = nullptr;
  const json* args = nullptr;
};

Result<Spec> read_spec(const json& spec, std::string_view kind) {
  if (!spec.is_object()) {
    return invalid("transition " + std::string(kind) +
                   " must be an object, got " + python_repr_json(spec));
  }
  auto name = spec.find("name");
  if (name == spec.end()) return invalid("'name'");
  static const json kNoArgs = json::object();
  const json* args = &kNoArgs;
  if (auto it = spec.find("args"); it != spec.end()) {
    if (!it->is_object()) {
      return invalid("args of transition " + std::string(kind) + " " +
                     python_repr_json(*name) + " must be an object");
    }
    args = &*it;
  }
  return Spec{&*name, args};
}

template <typename Factory>
const Factory* find_factory(
    const std::map<std::string, Factory, std::less<>>& factories,
    const json& name) {
  if (!name.is_string()) return nullptr;
  auto it = factories.find(name.get_ref<const std::string&>());
  return it == factories.end() ? nullptr : &it->second;
}

Result<double> number_or(const json& data, std::string_view key,
                         double fallback, std::string_view what) {
  auto it = data.find(key);
  if (it == data.end()) return fallback;
  if (it->is_boolean()) return it->get<bool>() ? 1.0 : 0.0;
  if (it->is_number()) return it->get<double>();
  return invalid(std::string(what) + " must be a number, got " +
                 python_repr_json(*it));
}

json target_spec(std::string_view name, json args) {
  return {{"name", name}, {"args", std::move(args)}};
}

}  // namespace

// ---- TransitionRegistry ----------------------------------------------------

TransitionRegistry::TransitionRegistry() {
  register_builtin_transitions(*this);
}

std::shared_ptr<const TransitionRegistry> TransitionRegistry::builtin() {
  static const auto registry = std::make_shared<const TransitionRegistry>();
  return registry;
}

void TransitionRegistry::register_target(std::string name,
                                         TargetFactory factory) {
  targets_.insert_or_assign(std::move(name), std::move(factory));
}

void TransitionRegistry::register_condition(std::string name,
                                            ConditionFactory factory) {
  conditions_.insert_or_assign(std::move(name), std::move(factory));
}

Result<std::unique_ptr<const TransitionTarget>> TransitionRegistry::make_target(
    const json& spec) const {
  if (spec.is_null()) return terminate_target("after_work");
  auto parts = read_spec(spec, kTarget);
  if (!parts) return std::unexpected(parts.error());
  const TargetFactory* factory = find_factory(targets_, *parts->name);
  if (factory == nullptr) {
    return invalid("no transition target registered for " +
                   python_repr_json(*parts->name));
  }
  return (*factory)(*parts->args);
}

Result<std::unique_ptr<const TransitionCondition>>
TransitionRegistry::make_condition(const json& spec) const {
  auto parts = read_spec(spec, kCondition);
  if (!parts) return std::unexpected(parts.error());
  const ConditionFactory* factory = find_factory(conditions_, *parts->name);
  if (factory == nullptr) {
    return invalid("no transition condition registered for " +
                   python_repr_json(*parts->name));
  }
  return (*factory)(*parts->args);
}

// ---- TransitionGraph -------------------------------------------------------

TransitionGraph::TransitionGraph(PrivateTag) {}
TransitionGraph::~TransitionGraph() = default;

Result<std::shared_ptr<const TransitionGraph>> TransitionGraph::load(
    const json& data, const TransitionRegistry& registry) {
  if (!data.is_object()) {
    return invalid("graph must be an object, got " + python_repr_json(data));
  }
  auto graph = std::make_shared<TransitionGraph>(PrivateTag{});
  auto initial = data.find("initial_speaker");
  if (initial == data.end()) return invalid("'initial_speaker'");
  if (initial->is_string())
    graph->initial_speaker_ = initial->get<std::string>();
  graph->initial_speaker_repr_ = python_repr_json(*initial);

  if (auto list = data.find("transitions"); list != data.end()) {
    if (!list->is_array()) {
      return invalid("'transitions' must be a list, got " +
                     python_repr_json(*list));
    }
    for (const json& entry : *list) {
      if (!entry.is_object()) {
        return invalid("transition must be an object, got " +
                       python_repr_json(entry));
      }
      auto when = entry.find("when");
      if (when == entry.end()) return invalid("'when'");
      auto then = entry.find("then");
      if (then == entry.end()) return invalid("'then'");
      Transition transition;
      auto condition = registry.make_condition(*when);
      if (!condition) return std::unexpected(condition.error());
      transition.when = std::move(*condition);
      auto target = registry.make_target(*then);
      if (!target) return std::unexpected(target.error());
      transition.then = std::move(*target);
      auto priority = number_or(entry, "priority", 0, "priority");
      if (!priority) return std::unexpected(priority.error());
      transition.priority = *priority;
      graph->transitions_.push_back(std::move(transition));
    }
  }
  std::ranges::stable_sort(graph->transitions_, {}, &Transition::priority);

  static const json kNull = nullptr;
  auto fallback = data.find("default_target");
  auto default_target =
      registry.make_target(fallback == data.end() ? kNull : *fallback);
  if (!default_target) return std::unexpected(default_target.error());
  graph->default_target_ = std::move(*default_target);

  if (auto cap = data.find("max_turns"); cap != data.end() && !cap->is_null()) {
    if (cap->is_boolean()) {
      graph->max_turns_ = cap->get<bool>() ? 1.0 : 0.0;
    } else if (cap->is_number()) {
      graph->max_turns_ = cap->get<double>();
    } else {
      return invalid("max_turns must be an integer or null, got " +
                     python_repr_json(*cap));
    }
  }
  graph->data_ = std::make_unique<const json>(data);
  return graph;
}

TransitionDecision TransitionGraph::select(const WorkflowState& state,
                                           const EnvelopeView& envelope) const {
  for (const Transition& transition : transitions_) {
    if (transition.when->evaluate(state, envelope)) {
      return transition.then->resolve(state, envelope);
    }
  }
  return default_target_->resolve(state, envelope);
}

Result<JsonText> TransitionGraph::round_robin(
    std::span<const std::string> participants,
    std::optional<std::int64_t> max_turns) {
  if (participants.empty()) {
    return invalid("round_robin requires at least 1 participant");
  }
  json rule = {{"when", target_spec("always", json::object())},
               {"then", target_spec("round_robin", json::object())},
               {"priority", 0}};
  json transitions = json::array();
  transitions.push_back(std::move(rule));
  json graph = {
      {"initial_speaker", participants.front()},
      {"transitions", std::move(transitions)},
      {"default_target",
       target_spec("terminate", {{"reason", "round_robin_complete"}})},
      {"max_turns", max_turns ? json(*max_turns) : json(nullptr)},
  };
  return graph.dump();
}

Result<JsonText> TransitionGraph::sequence(std::span<const std::string> steps) {
  if (steps.empty()) return invalid("sequence requires at least 1 step");
  json transitions = json::array();
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    transitions.push_back(
        {{"when", target_spec("from_speaker", {{"agent_id", steps[i]}})},
         {"then", target_spec("agent", {{"agent_id", steps[i + 1]}})},
         {"priority", 0}});
  }
  json graph = {
      {"initial_speaker", steps.front()},
      {"transitions", std::move(transitions)},
      {"default_target",
       target_spec("terminate", {{"reason", "sequence_complete"}})},
      {"max_turns", static_cast<std::int64_t>(steps.size())},
  };
  return graph.dump();
}

}  // namespace parley::engine
