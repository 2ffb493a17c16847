// parley-example-qa: a consulting Q&A between a human and a scripted agent.
//
//   parley-example-qa [--url ws://HOST:PORT] [--question TEXT]
//
// With --url the two clients connect to `parley serve` (or AG2's hub) over
// WebSocket; without it they share an in-process hub on a temporary store.
// The agent is an AgentClient with a ScriptedModel: its default handler
// acks the invite, runs the model on the question and posts the reply. The
// human opens a consulting channel to it, asks, and waits for the reply and
// the hub's close. Prints what they exchanged; exits 0 when the channel
// closed with consulting_complete, 1 otherwise.
#include <CLI/CLI.hpp>
#include <iostream>

#include "engine/client/agent_client.h"
#include "engine/client/envelopes.h"
#include "engine/client/scripted_model.h"
#include "tools/examples/example_support.h"

namespace {

using namespace parley;
using client::event_type::kText;
using examples::need;

int run(const std::string& url, const std::string& question) {
  examples::ExampleNetwork network(url);
  // The agent, on its own connection, with a model that has one answer.
  client::Registration agent;
  agent.passport.name = examples::unique_name("answerer");
  auto model =
      std::make_shared<client::ScriptedModel>(client::ScriptedModel::texts(
          {"Ship it on Thursday; the tests are green."}));
  const auto answerer =
      need(client::wait<std::shared_ptr<client::AgentClient>>([&](auto done) {
             client::AgentClient::register_agent(network.connect(), agent,
                                                 model, {}, done);
           }),
           "register the agent");
  const auto human = examples::register_human(network, "asker");

  return examples::consult(*human, answerer->passport().name, question);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"A consulting Q&A between a human and a scripted agent"};
  std::string url;
  std::string question = "Can we ship the release this week?";
  app.add_option("--url", url, "ws://HOST:PORT of a hub (default: in-process)");
  app.add_option("--question", question, "what the human asks");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(url, question);
  } catch (const std::exception& e) {
    std::cerr << "parley-example-qa: " << e.what() << '\n';
    return 1;
  }
}
