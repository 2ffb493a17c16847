// parley-example-workflow: a workflow seeded by a human and run by two
// scripted agents.
//
//   parley-example-workflow [--url ws://HOST:PORT] [--brief TEXT]
//
// The human opens a workflow channel with a drafter and a reviewer on the
// graph sequence(human, drafter, reviewer): the human speaks first, then
// the drafter, then the reviewer, and the channel closes with
// sequence_complete. The human's brief seeds it; each agent's default
// handler runs its ScriptedModel and posts the round-end `ag2.packet`.
// Prints each step; exits 0 when the channel closed with
// sequence_complete, 1 otherwise. Without --url all three run on an
// in-process hub.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/client/agent_client.h"
#include "engine/client/envelopes.h"
#include "engine/client/scripted_model.h"
#include "tools/examples/example_support.h"

namespace {

using namespace parley;
using client::Envelope;
using client::event_type::kChannelClosed;
using client::event_type::kPacket;
using examples::need;
using nlohmann::json;

// AG2's TransitionGraph.sequence(steps): each step hands to the next.
json sequence(const std::vector<std::string>& steps) {
  json transitions = json::array();
  for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
    transitions.push_back(
        {{"when",
          {{"name", "from_speaker"}, {"args", {{"agent_id", steps[i]}}}}},
         {"then", {{"name", "agent"}, {"args", {{"agent_id", steps[i + 1]}}}}},
         {"priority", 0}});
  }
  return {
      {"initial_speaker", steps.front()},
      {"transitions", std::move(transitions)},
      {"default_target",
       {{"name", "terminate"}, {"args", {{"reason", "sequence_complete"}}}}},
      {"max_turns", steps.size()}};
}

std::shared_ptr<client::AgentClient> scripted(examples::ExampleNetwork& network,
                                              const std::string& name,
                                              const std::string& answer) {
  client::Registration registration;
  registration.passport.name = name;
  auto model = std::make_shared<client::ScriptedModel>(
      client::ScriptedModel::texts({answer}));
  return need(
      client::wait<std::shared_ptr<client::AgentClient>>([&](auto done) {
        client::AgentClient::register_agent(network.connect(), registration,
                                            model, {}, done);
      }),
      "register " + name);
}

int run(const std::string& url, const std::string& brief) {
  examples::ExampleNetwork network(url);
  const auto drafter = scripted(network, examples::unique_name("drafter"),
                                "Parley: every agent heard, nothing lost.");
  const auto reviewer = scripted(network, examples::unique_name("reviewer"),
                                 "Approved: short, and true.");
  const auto human = examples::register_human(network, "editor");
  const json graph =
      sequence({human->agent_id(), drafter->agent_id(), reviewer->agent_id()});
  const auto channel = examples::open_channel(
      *human, {.type = "workflow",
               .targets = {drafter->passport().name, reviewer->passport().name},
               .knobs_json = json{{"graph", graph}}.dump()});
  examples::say(*human, channel.channel_id, brief);

  const std::map<std::string, std::string> names{
      {drafter->agent_id(), drafter->passport().name},
      {reviewer->agent_id(), reviewer->passport().name}};
  for (;;) {
    const auto next = examples::next_in_channel(*human, channel.channel_id,
                                                {kPacket, kChannelClosed});
    if (next.event_type == kChannelClosed) {
      return examples::closed_with(next, "sequence_complete") ? 0 : 1;
    }
    const auto name = names.find(next.sender_id);
    std::cout << (name == names.end() ? next.sender_id : name->second) << ": "
              << json::parse(client::event_data_json(next)).value("body", "")
              << '\n';
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A workflow seeded by a human and run by two scripted agents"};
  std::string url;
  std::string brief = "Write a one-line tagline for Parley.";
  app.add_option("--url", url, "ws://HOST:PORT of a hub (default: in-process)");
  app.add_option("--brief", brief, "what the human seeds the workflow with");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(url, brief);
  } catch (const std::exception& e) {
    std::cerr << "parley-example-workflow: " << e.what() << '\n';
    return 1;
  }
}
