// The workflow adapter and its TransitionGraph (WF-*): graph loading and the
// registry, targets and conditions, turn gating, packets, context variables and
// close reasons.
#include "engine/adapters/workflow.h"

#include <doctest/doctest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/adapters/transition_graph.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "tests/test_support.h"

namespace parley::engine {
namespace {

using nlohmann::json;
namespace ev = event_type;

Envelope envelope(std::string sender, std::string_view type, const json& data,
                  std::string id) {
  Envelope e;
  e.channel_id = "chan";
  e.sender_id = std::move(sender);
  e.event_type = std::string(type);
  auto flex = to_flex(data);
  REQUIRE(flex.has_value());
  e.event_data = std::move(*flex);
  e.envelope_id = std::move(id);
  return e;
}

Envelope text(std::string sender, std::string id = "e") {
  return envelope(std::move(sender), ev::kText, {{"text", "hi"}},
                  std::move(id));
}

// A packet as AG2's client builds it after a round: routing,
// context_updates {set, delete}, body.
Envelope packet(std::string sender, json routing, json set = json::object(),
                json remove = json::array(), std::string id = "p") {
  return envelope(std::move(sender), ev::kPacket,
                  {{"routing", std::move(routing)},
                   {"context_updates",
                    {{"set", std::move(set)}, {"delete", std::move(remove)}}},
                   {"body", ""}},
                  std::move(id));
}

Envelope context_set(std::string sender, json set,
                     json remove = json::array()) {
  return envelope(std::move(sender), ev::kContextSet,
                  {{"set", std::move(set)}, {"delete", std::move(remove)}},
                  "c");
}

json rule(json when, json then, int priority = 0) {
  return {{"when", std::move(when)},
          {"then", std::move(then)},
          {"priority", priority}};
}
json named(std::string name, json args = json::object()) {
  return {{"name", std::move(name)}, {"args", std::move(args)}};
}
json agent(std::string id) { return named("agent", {{"agent_id", id}}); }
json from_speaker(std::string id) {
  return named("from_speaker", {{"agent_id", id}});
}
json tool_called(std::string tool) {
  return named("tool_called", {{"tool_name", tool}});
}
json terminate(std::string reason) {
  return named("terminate", {{"reason", reason}});
}
json graph(std::string initial, json rules, json fallback,
           json max_turns = nullptr) {
  return {{"initial_speaker", std::move(initial)},
          {"transitions", std::move(rules)},
          {"default_target", std::move(fallback)},
          {"max_turns", std::move(max_turns)}};
}
// A braced list of rules: always an array (a json initialized from a
// braced list of one json is that json under clang).
json graph(std::string initial, std::initializer_list<json> rules,
           json fallback, json max_turns = nullptr) {
  return graph(std::move(initial), json(std::vector<json>(rules)),
               std::move(fallback), std::move(max_turns));
}

ChannelMetadata metadata_for(std::vector<std::string> ids, json knobs) {
  WorkflowAdapter adapter;
  ChannelMetadata metadata;
  metadata.channel_id = "chan";
  metadata.manifest = adapter.manifest();
  metadata.creator_id = ids.front();
  metadata.knobs = knobs.dump();
  metadata.state = ChannelState::kActive;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string role = i == 0            ? "initiator"
                             : ids.size() == 2 ? "respondent"
                                               : "participant";
    metadata.participants.push_back(
        {.agent_id = ids[i], .role = role, .order = std::int64_t(i)});
  }
  return metadata;
}

// A workflow channel driven as the hub drives it.
struct Workflow {
  Workflow(std::vector<std::string> ids, json graph_json,
           json context = nullptr,
           std::shared_ptr<const TransitionRegistry> registry =
               TransitionRegistry::builtin())
      : adapter(std::move(registry)) {
    json knobs = {{"graph", std::move(graph_json)}};
    if (!context.is_null()) knobs["context_vars"] = std::move(context);
    metadata = metadata_for(std::move(ids), knobs);
    auto created = adapter.validate_create(metadata);
    REQUIRE_MESSAGE(created.has_value(), testing::error_message(created));
    auto initial = adapter.initial_state(metadata);
    REQUIRE_MESSAGE(initial.has_value(), testing::error_message(initial));
    state = std::move(*initial);
  }

  // Posts and returns the close reason ("" when the channel stays open).
  std::string post(const Envelope& e) {
    auto ok = adapter.validate_send(metadata, view_of(e), *state);
    REQUIRE_MESSAGE(ok.has_value(), testing::error_message(ok));
    adapter.fold(view_of(e), *state);
    const auto result = adapter.on_accepted(metadata, view_of(e), *state);
    if (result.next_state) CHECK(*result.next_state == ChannelState::kClosed);
    return result.auto_close_reason;
  }
  std::string refusal(const Envelope& e) const {
    auto ok = adapter.validate_send(metadata, view_of(e), *state);
    REQUIRE_FALSE(ok.has_value());
    CHECK(ok.error().kind == ErrorKind::kProtocol);
    return ok.error().message;
  }
  const WorkflowState& workflow() const {
    return static_cast<const WorkflowState&>(*state);
  }
  json expected() const {
    const auto& next = workflow().expected_next_speaker;
    return next ? json(*next) : json();
  }
  json context() const { return *workflow().context_vars; }

  WorkflowAdapter adapter;
  ChannelMetadata metadata;
  std::unique_ptr<AdapterState> state;
};

std::string create_error(const json& knobs,
                         std::vector<std::string> ids = {"alice", "bob"}) {
  WorkflowAdapter adapter;
  auto ok = adapter.validate_create(metadata_for(std::move(ids), knobs));
  REQUIRE_FALSE(ok.has_value());
  CHECK(ok.error().kind == ErrorKind::kProtocol);
  return ok.error().message;
}

std::string initial_state_error(const json& knobs,
                                std::vector<std::string> ids = {"alice",
                                                                "bob"}) {
  WorkflowAdapter adapter;
  auto state = adapter.initial_state(metadata_for(std::move(ids), knobs));
  REQUIRE_FALSE(state.has_value());
  CHECK(state.error().kind == ErrorKind::kProtocol);
  return state.error().message;
}

json round_robin(std::vector<std::string> ids,
                 std::optional<std::int64_t> max_turns = std::nullopt) {
  auto text = TransitionGraph::round_robin(ids, max_turns);
  REQUIRE(text.has_value());
  return json::parse(*text);
}

json sequence(std::vector<std::string> ids) {
  auto text = TransitionGraph::sequence(ids);
  REQUIRE(text.has_value());
  return json::parse(*text);
}

// ---- graph JSON and the registry -------------------------------------------

TEST_CASE("factories produce AG2's graph JSON") {
  CHECK(round_robin({"a", "b"}, 8) == json::parse(R"(
      {"default_target": {"args": {"reason": "round_robin_complete"},
                          "name": "terminate"},
       "initial_speaker": "a", "max_turns": 8,
       "transitions": [{"priority": 0,
                        "then": {"args": {}, "name": "round_robin"},
                        "when": {"args": {}, "name": "always"}}]})"));
  CHECK(round_robin({"a"})["max_turns"].is_null());
  CHECK(sequence({"a", "b", "c"}) == json::parse(R"(
      {"default_target": {"args": {"reason": "sequence_complete"},
                          "name": "terminate"},
       "initial_speaker": "a", "max_turns": 3,
       "transitions": [
         {"priority": 0, "then": {"args": {"agent_id": "b"}, "name": "agent"},
          "when": {"args": {"agent_id": "a"}, "name": "from_speaker"}},
         {"priority": 0, "then": {"args": {"agent_id": "c"}, "name": "agent"},
          "when": {"args": {"agent_id": "b"}, "name": "from_speaker"}}]})"));
}

TEST_CASE("factories refuse empty lists") {
  auto robin = TransitionGraph::round_robin({});
  REQUIRE_FALSE(robin.has_value());
  CHECK(robin.error().message == "round_robin requires at least 1 participant");
  auto steps = TransitionGraph::sequence({});
  REQUIRE_FALSE(steps.has_value());
  CHECK(steps.error().message == "sequence requires at least 1 step");
}

TEST_CASE("loading fills AG2's defaults and sorts by priority, stably") {
  const json data = {
      {"initial_speaker", "a"},
      {"transitions",
       {rule(from_speaker("x"), agent("p5"), 5),
        {{"when", from_speaker("x")}, {"then", agent("p0-first")}},
        rule(from_speaker("x"), agent("p1"), 1),
        rule(from_speaker("x"), agent("p0-second"), 0)}}};
  auto loaded = TransitionGraph::load(data, *TransitionRegistry::builtin());
  REQUIRE(loaded.has_value());
  const auto& g = **loaded;
  CHECK(g.data() == data);
  CHECK(g.initial_speaker() == "a");
  CHECK_FALSE(g.max_turns().has_value());
  WorkflowState state;
  const auto e = text("x");
  std::vector<std::string> order;
  for (const auto& t : g.transitions()) {
    order.emplace_back(*t.then->resolve(state, view_of(e)).next_speaker);
  }
  CHECK(order == std::vector<std::string>{"p0-first", "p0-second", "p1", "p5"});
  const auto fallback = g.default_target().resolve(state, view_of(e));
  CHECK_FALSE(fallback.next_speaker.has_value());
  CHECK(fallback.close_reason == "after_work");
}

TEST_CASE("graph loading errors name what is wrong") {
  const auto& registry = *TransitionRegistry::builtin();
  auto error_of = [&](const json& data) {
    auto loaded = TransitionGraph::load(data, registry);
    REQUIRE_FALSE(loaded.has_value());
    return loaded.error().message;
  };
  CHECK(error_of({{"initial_speaker", "a"},
                  {"transitions", {rule(named("always"), named("warp"))}}}) ==
        "no transition target registered for 'warp'");
  CHECK(error_of({{"initial_speaker", "a"},
                  {"transitions", {rule(named("sometimes"), agent("b"))}}}) ==
        "no transition condition registered for 'sometimes'");
  CHECK(error_of({{"initial_speaker", "a"}, {"default_target", named("x")}}) ==
        "no transition target registered for 'x'");
  CHECK(error_of({{"transitions", json::array()}}) == "'initial_speaker'");
  CHECK(error_of({{"initial_speaker", "a"},
                  {"transitions", {{{"then", agent("b")}}}}}) == "'when'");
  CHECK(error_of({{"initial_speaker", "a"},
                  {"transitions", {rule(named("always"), named("agent"))}}}) ==
        "target 'agent' missing required argument 'agent_id'");
  CHECK(error_of({{"initial_speaker", "a"},
                  {"default_target", named("stay", {{"x", 1}})}}) ==
        "target 'stay' got an unexpected argument 'x'");
  CHECK(error_of({{"initial_speaker", "a"}, {"max_turns", "3"}}) ==
        "max_turns must be an integer or null, got '3'");
}

TEST_CASE("WF-01 built-in targets") {
  const auto& registry = *TransitionRegistry::builtin();
  WorkflowState state;
  state.participant_order = {"alice", "bob", "carol"};
  state.creator_id = "alice";
  auto resolve = [&](const json& spec, const std::string& last) {
    state.last_speaker_id = last;
    auto target = registry.make_target(spec);
    REQUIRE(target.has_value());
    const auto e = text(last);
    const auto decision = (*target)->resolve(state, view_of(e));
    return std::pair(
        decision.next_speaker ? json(*decision.next_speaker) : json(),
        std::string(decision.close_reason));
  };
  CHECK(resolve(agent("bob"), "alice").first == "bob");
  CHECK(resolve(named("round_robin"), "alice").first == "bob");
  CHECK(resolve(named("round_robin"), "carol").first == "alice");
  CHECK(resolve(named("round_robin"), "ghost").first == "alice");
  CHECK(resolve(named("stay"), "bob").first == "bob");
  CHECK(resolve(named("revert_to_initiator"), "bob").first == "alice");
  CHECK(resolve(terminate("done"), "bob") ==
        std::pair(json(), std::string("done")));
  CHECK(resolve(named("terminate"), "bob").second == "after_work");
  state.participant_order.clear();
  CHECK(resolve(named("round_robin"), "bob") ==
        std::pair(json(), std::string("no_participants")));
}

TEST_CASE(
    "WF-05 custom targets extend a registry, registries are "
    "isolated") {
  class Fixed final : public TransitionTarget {
   public:
    explicit Fixed(int seconds) : seconds_(std::to_string(seconds)) {}
    TransitionDecision resolve(const WorkflowState&,
                               const EnvelopeView&) const override {
      return {.close_reason = seconds_};
    }

   private:
    std::string seconds_;
  };
  auto custom = std::make_shared<TransitionRegistry>();
  custom->register_target(
      "custom_iso_target",
      [](const json& args) -> Result<std::unique_ptr<const TransitionTarget>> {
        return std::make_unique<const Fixed>(args.at("seconds").get<int>());
      });
  const json data = {
      {"initial_speaker", "alice"},
      {"default_target", named("custom_iso_target", {{"seconds", 42}})}};
  auto loaded = TransitionGraph::load(data, *custom);
  REQUIRE(loaded.has_value());
  CHECK((*loaded)->data() == data);  // round-trips equal
  WorkflowState state;
  const auto e = text("alice");
  CHECK((*loaded)->default_target().resolve(state, view_of(e)).close_reason ==
        "42");

  auto plain = TransitionGraph::load(data, *TransitionRegistry::builtin());
  REQUIRE_FALSE(plain.has_value());
  CHECK(plain.error().message ==
        "no transition target registered for 'custom_iso_target'");
  auto builtin = TransitionRegistry::builtin()->make_target(agent("alice"));
  REQUIRE(builtin.has_value());
  CHECK((*builtin)->resolve(state, view_of(e)).next_speaker == "alice");

  // A workflow adapter built on the custom registry accepts the graph.
  Workflow flow({"alice", "bob"}, data, nullptr, custom);
  CHECK(flow.post(text("alice")) == "42");
}

// ---- creation ---------------------------------------------------------------

TEST_CASE("WF-07 creation validation messages, in AG2's order") {
  CHECK(create_error({{"graph", round_robin({"alice"})}}, {"alice"}) ==
        "workflow requires at least 2 participants, got 1");
  const std::string no_graph =
      "workflow requires knobs['graph'] as a dict \xe2\x80\x94 call "
      "TransitionGraph.to_dict() before passing";
  CHECK(create_error(json::object()) == no_graph);
  CHECK(create_error({{"graph", "round_robin"}}) == no_graph);
  CHECK(create_error({{"graph",
                       {{"initial_speaker", "alice"},
                        {"default_target", named("warp")}}}}) ==
        "invalid workflow graph: no transition target registered for 'warp'");
  CHECK(create_error({{"graph", {{"transitions", json::array()}}}}) ==
        "invalid workflow graph: 'initial_speaker'");
  CHECK(create_error({{"graph", round_robin({"zed"})}},
                     {"carol", "alice", "bob"}) ==
        "workflow initial_speaker 'zed' not in participants ['alice', 'bob', "
        "'carol']");
  CHECK(create_error({{"graph", {{"initial_speaker", 7}}}}) ==
        "workflow initial_speaker 7 not in participants ['alice', 'bob']");
}

TEST_CASE("WF-07 initial_state checks the graph and context_vars") {
  CHECK(initial_state_error({{"graph", round_robin({"zed"})}},
                            {"carol", "alice"}) ==
        "workflow initial_speaker 'zed' not in participants ['carol', "
        "'alice']");
  const std::string bad_context =
      "workflow knobs['context_vars'] must be a dict if provided";
  CHECK(initial_state_error({{"graph", round_robin({"alice"})},
                             {"context_vars", json::array()}}) == bad_context);
  CHECK(initial_state_error({{"graph", round_robin({"alice"})},
                             {"context_vars", nullptr}}) == bad_context);
}

TEST_CASE("workflow initial state is AG2's adapter_state") {
  // From tests/golden/scripts: a sequence workflow with context_vars.
  const json knobs = json::parse(R"(
    {"context_vars": {"stage": 1},
     "graph": {"default_target": {"args": {"reason": "sequence_complete"}, "name": "terminate"},
               "initial_speaker": "18ea417f493c26a76951373220cc025d", "max_turns": 2,
               "transitions": [{"priority": 0, "then": {"args": {"agent_id": "18ea417f48f8c9b20131e0d8149feea4"}, "name": "agent"},
                                "when": {"args": {"agent_id": "18ea417f493c26a76951373220cc025d"}, "name": "from_speaker"}}]}})");
  const json golden = json::parse(R"(
    {"context_vars": {"stage": 1}, "creator_id": "18ea417f493c26a76951373220cc025d",
     "expected_next_speaker": "18ea417f493c26a76951373220cc025d",
     "graph_data": {"default_target": {"args": {"reason": "sequence_complete"}, "name": "terminate"},
                    "initial_speaker": "18ea417f493c26a76951373220cc025d", "max_turns": 2,
                    "transitions": [{"priority": 0, "then": {"args": {"agent_id": "18ea417f48f8c9b20131e0d8149feea4"}, "name": "agent"},
                                     "when": {"args": {"agent_id": "18ea417f493c26a76951373220cc025d"}, "name": "from_speaker"}}]},
     "last_envelope_id": null, "last_speaker_id": null,
     "participant_order": ["18ea417f493c26a76951373220cc025d", "18ea417f48f8c9b20131e0d8149feea4"],
     "pending_close_reason": "", "turn_count": 0})");
  Workflow flow(
      {"18ea417f493c26a76951373220cc025d", "18ea417f48f8c9b20131e0d8149feea4"},
      knobs["graph"], knobs["context_vars"]);
  CHECK(json::parse(flow.state->to_json()) == golden);
  CHECK(flow.state->to_json() == golden.dump());
}

TEST_CASE("graph_data keeps the knobs graph verbatim, null default included") {
  const json data = {{"initial_speaker", "alice"},
                     {"transitions", json::array()},
                     {"default_target", nullptr},
                     {"max_turns", 6},
                     {"extra", {{"kept", 1.5}}}};
  Workflow flow({"alice", "bob"}, data);
  CHECK(json::parse(flow.state->to_json())["graph_data"] == data);
  CHECK(flow.post(text("alice")) == "after_work");
}

// ---- turns ------------------------------------------------------------------

TEST_CASE("WF-08 round robin via graph, out-of-turn refused") {
  Workflow flow({"alice", "bob", "carol"},
                round_robin({"alice", "bob", "carol"}));
  CHECK(flow.expected() == "alice");
  CHECK(flow.post(text("alice", "e1")).empty());
  CHECK(flow.post(text("bob", "e2")).empty());
  CHECK(flow.post(text("carol", "e3")).empty());
  CHECK(flow.expected() == "alice");
  CHECK(flow.workflow().turn_count == 3);
  CHECK(flow.refusal(text("bob")) ==
        "workflow 'chan' expects 'alice' to speak, got 'bob'");
}

TEST_CASE("WF-09 a sequence closes with sequence_complete, not max_turns") {
  Workflow flow({"alice", "bob", "carol"}, sequence({"alice", "bob", "carol"}));
  CHECK(flow.post(text("alice")).empty());
  CHECK(flow.post(text("bob")).empty());
  CHECK(flow.post(text("carol")) == "sequence_complete");
  CHECK(flow.workflow().turn_count == 3);
}

TEST_CASE("WF-10 graph termination wins over max_turns") {
  SUBCASE("a: from_speaker(carol) terminates with its reason") {
    Workflow flow({"alice", "bob", "carol"},
                  graph("alice",
                        {rule(from_speaker("alice"), agent("bob")),
                         rule(from_speaker("bob"), agent("carol")),
                         rule(from_speaker("carol"), terminate("custom_done"))},
                        terminate("fall_through"), 3));
    CHECK(flow.post(text("alice")).empty());
    CHECK(flow.post(text("bob")).empty());
    CHECK(flow.post(text("carol")) == "custom_done");
  }
  SUBCASE("b: round robin over three, capped at six") {
    Workflow flow({"a", "b", "c"}, round_robin({"a", "b", "c"}, 6));
    const char* order[] = {"a", "b", "c", "a", "b"};
    for (const char* sender : order) CHECK(flow.post(text(sender)).empty());
    CHECK(flow.post(text("c")) == "max_turns");
  }
  SUBCASE("c: ping-pong capped at four") {
    Workflow flow({"alice", "bob"},
                  graph("alice",
                        {rule(from_speaker("alice"), agent("bob")),
                         rule(from_speaker("bob"), agent("alice"))},
                        agent("alice"), 4));
    CHECK(flow.post(text("alice")).empty());
    CHECK(flow.post(text("bob")).empty());
    CHECK(flow.post(text("alice")).empty());
    CHECK(flow.post(text("bob")) == "max_turns");
  }
}

TEST_CASE("an empty terminate reason closes with workflow_terminated") {
  Workflow flow({"alice", "bob"}, graph("alice", json::array(), terminate("")));
  CHECK(flow.post(text("alice")) == "workflow_terminated");
  CHECK_FALSE(flow.adapter.expected_next(flow.metadata, *flow.state));
}

TEST_CASE("WF-11 swarm hand-off by tool, then revert to the initiator") {
  Workflow flow({"triage", "eng"},
                graph("triage",
                      {rule(tool_called("transfer_to_eng"), agent("eng")),
                       rule(from_speaker("eng"), named("revert_to_initiator"))},
                      terminate("triage_done"), 4));
  CHECK(flow.post(packet("triage", {{"kind", "handoff"},
                                    {"tool", "transfer_to_eng"},
                                    {"reason", "needs eng review"}}))
            .empty());
  CHECK(flow.expected() == "eng");
  CHECK(flow.post(text("eng")).empty());
  CHECK(flow.expected() == "triage");
}

TEST_CASE("WF-12 finish routing closes with its reason, or finished") {
  Workflow flow({"alice", "bob"}, round_robin({"alice", "bob"}));
  CHECK(flow.post(packet("alice", {{"kind", "finish"},
                                   {"tool", "finish"},
                                   {"reason", "all_done"},
                                   {"summary", "covered the agenda"}})) ==
        "all_done");
  CHECK(flow.expected().is_null());
  CHECK(flow.workflow().pending_close_reason == "all_done");

  Workflow plain({"alice", "bob"}, round_robin({"alice", "bob"}));
  CHECK(plain.post(packet("alice", {{"kind", "finish"}, {"tool", "finish"}})) ==
        "finished");
}

TEST_CASE("WF-13 manager pattern: default revert to the initiator") {
  Workflow flow({"mgr", "alice", "bob"},
                graph("mgr",
                      {rule(tool_called("ask_alice"), agent("alice")),
                       rule(tool_called("ask_bob"), agent("bob"))},
                      named("revert_to_initiator"), 20));
  const json ask_alice = {{"kind", "handoff"}, {"tool", "ask_alice"}};
  const json ask_bob = {{"kind", "handoff"}, {"tool", "ask_bob"}};
  flow.post(packet("mgr", ask_alice));
  CHECK(flow.expected() == "alice");
  flow.post(text("alice"));
  CHECK(flow.expected() == "mgr");
  flow.post(packet("mgr", ask_bob));
  CHECK(flow.expected() == "bob");
  flow.post(text("bob"));
  CHECK(flow.expected() == "mgr");
}

TEST_CASE("WF-14 re-folding after a hand-off restores the workflow state") {
  const json swarm =
      graph("triage",
            {rule(tool_called("transfer_to_eng"), agent("eng")),
             rule(from_speaker("eng"), named("revert_to_initiator"))},
            named("terminate"), 10);
  Workflow live({"triage", "eng"}, swarm);
  const auto handoff =
      packet("triage", {{"kind", "handoff"}, {"tool", "transfer_to_eng"}}, {},
             {}, "p1");
  live.post(handoff);
  Workflow replayed({"triage", "eng"}, swarm);
  replayed.adapter.fold(view_of(handoff), *replayed.state);
  CHECK(replayed.state->to_json() == live.state->to_json());
  const auto& state = replayed.workflow();
  CHECK(state.expected_next_speaker == "eng");
  CHECK(state.last_speaker_id == "triage");
  CHECK(state.turn_count == 1);
  CHECK(state.creator_id == "triage");
  CHECK(state.participant_order == std::vector<std::string>{"triage", "eng"});
  auto turn =
      replayed.adapter.expected_next(replayed.metadata, *replayed.state);
  REQUIRE(turn.has_value());
  CHECK(turn->agent_id == "eng");
  CHECK(turn->triggering_envelope_id == "p1");
}

TEST_CASE("a hand-off target is taken verbatim, even a non-participant") {
  Workflow flow({"alice", "bob"}, round_robin({"alice", "bob"}));
  flow.post(packet("alice", {{"kind", "handoff"}, {"target", "stranger"}}));
  CHECK(flow.expected() == "stranger");
  CHECK(flow.refusal(text("bob")) ==
        "workflow 'chan' expects 'stranger' to speak, got 'bob'");
}

TEST_CASE(
    "a hand-off without target, or a text-kind packet, runs the "
    "graph") {
  Workflow flow({"alice", "bob", "carol"},
                round_robin({"alice", "bob", "carol"}));
  flow.post(packet("alice", {{"kind", "handoff"}, {"target", ""}}));
  CHECK(flow.expected() == "bob");
  flow.post(packet("bob", {{"kind", "text"}}));
  CHECK(flow.expected() == "carol");
  flow.post(envelope("carol", ev::kPacket, {{"body", "no routing"}}, "p"));
  CHECK(flow.expected() == "alice");
}

TEST_CASE(
    "informational types pass without turns, a terminated workflow "
    "gates nobody") {
  Workflow flow({"alice", "bob"}, round_robin({"alice", "bob"}));
  const auto before = flow.state->to_json();
  for (const auto& e :
       {envelope("bob", "ag2.task.progress", {{"task_id", "t"}}, "x1"),
        envelope("ghost", "custom.kind", json::object(), "x2"),
        envelope("bob", ev::kChannelOpened, {{"channel_id", "chan"}}, "x3")}) {
    CHECK(flow.post(e).empty());
  }
  CHECK(flow.state->to_json() == before);

  WorkflowState terminated;
  auto ok = flow.adapter.validate_send(flow.metadata, view_of(text("bob")),
                                       terminated);
  CHECK(ok.has_value());
}

// ---- context variables ------------------------------------------------------

TEST_CASE("WF-16 context.set is not a turn and ignores turn order") {
  Workflow flow({"alice", "bob"}, round_robin({"alice", "bob"}));
  CHECK(flow.post(context_set("bob", {{"observer_flag", true}})).empty());
  CHECK(flow.context() == json{{"observer_flag", true}});
  CHECK(flow.expected() == "alice");
  CHECK(flow.workflow().turn_count == 0);
  CHECK(flow.refusal(context_set("mallory", {{"x", 1}})) ==
        "workflow 'chan' only accepts EV_CONTEXT_SET from participants, got "
        "'mallory'");
}

TEST_CASE("WF-17 context variables re-fold to the same map") {
  Workflow live({"alice", "bob"}, round_robin({"alice", "bob"}));
  const std::vector<Envelope> log = {
      context_set("alice", {{"k1", "v1"}, {"k2", "v2"}}),
      context_set("bob", {{"k3", "v3"}}, {"k1"}),
  };
  for (const auto& e : log) live.post(e);
  CHECK(live.context() == json{{"k2", "v2"}, {"k3", "v3"}});
  Workflow replayed({"alice", "bob"}, round_robin({"alice", "bob"}));
  for (const auto& e : log) replayed.adapter.fold(view_of(e), *replayed.state);
  CHECK(replayed.state->to_json() == live.state->to_json());
}

TEST_CASE("context.set deletes before it sets") {
  Workflow flow({"alice", "bob"}, round_robin({"alice", "bob"}), {{"k", 1}});
  flow.post(context_set("alice", {{"k", 2}}, {"k", "missing"}));
  CHECK(flow.context() == json{{"k", 2}});
  // Python iterates a string's characters.
  flow.post(context_set("alice", {{"a", 1}, {"b", 2}}, json::array()));
  flow.post(context_set("alice", json::object(), "ab"));
  CHECK(flow.context() == json{{"k", 2}});
}

TEST_CASE("WF-18 context_equals drives routing, list order breaks ties") {
  Workflow flow(
      {"triage", "security", "legal"},
      graph("triage",
            {rule(from_speaker("security"), terminate("security_done")),
             rule(from_speaker("legal"), terminate("legal_done")),
             rule(named("context_equals",
                        {{"key", "route"}, {"value", "security"}}),
                  agent("security")),
             rule(from_speaker("triage"), agent("legal"))},
            terminate("fall_through")));
  flow.post(context_set("triage", {{"route", "security"}}));
  CHECK(flow.post(text("triage")).empty());
  CHECK(flow.expected() == "security");
  CHECK(flow.post(text("security")) == "security_done");
}

TEST_CASE("context_equals compares as Python does") {
  const auto& registry = *TransitionRegistry::builtin();
  WorkflowState state;
  *state.context_vars = {{"n", 1}, {"flag", true}, {"s", "1"}};
  const auto e = text("x");
  auto equals = [&](const std::string& key, const json& value) {
    auto condition = registry.make_condition(
        named("context_equals", {{"key", key}, {"value", value}}));
    REQUIRE(condition.has_value());
    return (*condition)->evaluate(state, view_of(e));
  };
  CHECK(equals("n", 1.0));
  CHECK(equals("n", true));
  CHECK(equals("flag", 1));
  CHECK_FALSE(equals("s", 1));
  CHECK(equals("absent", nullptr));
  CHECK_FALSE(equals("n", nullptr));
}

TEST_CASE("WF-19 packet context updates apply before routing") {
  SUBCASE("a: a packet sets the variable it is routed on") {
    Workflow flow({"router", "billing", "technical"},
                  graph("router",
                        {rule(named("context_equals", {{"key", "category"},
                                                       {"value", "billing"}}),
                              agent("billing")),
                         rule(named("context_equals", {{"key", "category"},
                                                       {"value", "technical"}}),
                              agent("technical"))},
                        named("terminate")));
    flow.post(packet("router",
                     {{"kind", "handoff"}, {"tool", "classify_as_technical"}},
                     {{"category", "technical"}}));
    CHECK(flow.context() == json{{"category", "technical"}});
    CHECK(flow.expected() == "technical");
  }
  SUBCASE("b: a deleted key matches context_equals(key, null)") {
    Workflow flow({"router", "other"},
                  graph("router",
                        {rule(named("context_equals",
                                    {{"key", "route"}, {"value", nullptr}}),
                              terminate("cleared"))},
                        agent("other")),
                  {{"route", "stale"}});
    CHECK(flow.context() == json{{"route", "stale"}});  // WF-20
    CHECK(flow.post(packet("router",
                           {{"kind", "handoff"}, {"tool", "clear_route"}},
                           json::object(), {"route"})) == "cleared");
    CHECK(flow.context() == json::object());
    CHECK(flow.expected().is_null());
    CHECK(flow.workflow().pending_close_reason == "cleared");
  }
  SUBCASE("c: empty updates keep the context and follow the graph") {
    Workflow flow(
        {"a", "b"},
        graph("a", {rule(from_speaker("a"), agent("b"))}, named("terminate")),
        {{"existing", "kept"}});
    flow.post(packet("a", {{"kind", "text"}}));
    CHECK(flow.context() == json{{"existing", "kept"}});
    CHECK(flow.expected() == "b");
  }
  SUBCASE("d: a targeted hand-off beats the graph's tool rule") {
    Workflow flow({"r", "a", "b"},
                  graph("r", {rule(tool_called("smart_route"), agent("a"))},
                        named("terminate")));
    flow.post(packet(
        "r", {{"kind", "handoff"}, {"tool", "smart_route"}, {"target", "b"}}));
    CHECK(flow.expected() == "b");
  }
}

TEST_CASE(
    "a packet's context key is a set-map when context_updates is "
    "absent") {
  Workflow flow(
      {"alice", "bob"},
      graph("alice",
            {rule(named("context_equals", {{"key", "go"}, {"value", "bob"}}),
                  agent("bob"))},
            terminate("no_go")));
  flow.post(envelope("alice", ev::kPacket,
                     {{"body", "b"}, {"context", {{"go", "bob"}}}}, "p1"));
  CHECK(flow.context() == json{{"go", "bob"}});
  CHECK(flow.expected() == "bob");
  // With context_updates present, `context` is not read.
  flow.post(envelope(
      "bob", ev::kPacket,
      {{"context_updates", {{"set", {{"x", 1}}}}}, {"context", {{"y", 2}}}},
      "p2"));
  CHECK(flow.context() == json{{"go", "bob"}, {"x", 1}});
}

TEST_CASE("WF-21 a bridge drives a workflow with packets") {
  Workflow flow({"alice", "bob"},
                graph("alice",
                      {rule(from_speaker("alice"), agent("bob")),
                       rule(from_speaker("bob"), named("revert_to_initiator"))},
                      terminate("bridge_done"), 8));
  flow.post(envelope("alice", ev::kPacket,
                     {{"routing", {{"kind", "text"}}},
                      {"context_updates",
                       {{"set", json::object()}, {"delete", json::array()}}},
                      {"body", "alice opens the discussion"}},
                     "p1"));
  CHECK(flow.expected() == "bob");
  CHECK(flow.workflow().last_speaker_id == "alice");
  // AG2's generic packet helper: body and a hand-off, no context_updates.
  flow.post(envelope("bob", ev::kPacket,
                     {{"body", "back to you"},
                      {"routing", {{"kind", "handoff"}, {"target", "alice"}}}},
                     "p2"));
  CHECK(flow.expected() == "alice");
  CHECK(flow.workflow().last_speaker_id == "bob");
}

TEST_CASE(
    "tool_called matches only packets whose routing tool equals the "
    "name") {
  const auto& registry = *TransitionRegistry::builtin();
  WorkflowState state;
  auto fires = [&](const json& tool_name, const Envelope& e) {
    auto condition = registry.make_condition(
        named("tool_called", {{"tool_name", tool_name}}));
    REQUIRE(condition.has_value());
    return (*condition)->evaluate(state, view_of(e));
  };
  const auto with_tool = packet("a", {{"kind", "handoff"}, {"tool", "go"}});
  const auto without_tool = packet("a", {{"kind", "text"}});
  CHECK(fires("go", with_tool));
  CHECK_FALSE(fires("stop", with_tool));
  CHECK_FALSE(fires("go", text("a")));
  CHECK_FALSE(fires("go", without_tool));
  CHECK(fires(nullptr, without_tool));  // None == None
  CHECK(fires(1, packet("a", {{"kind", "handoff"}, {"tool", true}})));
}

}  // namespace
}  // namespace parley::engine
