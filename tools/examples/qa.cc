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
#include "engine/client/human_client.h"
#include "engine/client/scripted_model.h"
#include "tools/examples/example_network.h"

namespace {

using namespace parley;
using namespace std::chrono_literals;
using client::Envelope;
using examples::need;

// How long the human waits for the reply, and then for the close.
constexpr auto kWait = 30s;

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
  const client::Passport& agent_passport = answerer->passport();

  // The human, on another connection.
  client::Registration person;
  person.passport.name = examples::unique_name("asker");
  auto human =
      need(client::wait<std::shared_ptr<client::HumanClient>>([&](auto done) {
             client::HumanClient::register_human(network.connect(), person, {},
                                                 done);
           }),
           "register the human");

  auto channel = need(
      client::wait<client::ChannelMetadata>([&](auto done) {
        human->open({.type = "consulting", .targets = {agent_passport.name}},
                    done);
      }),
      "open the consulting channel");
  std::cout << "channel " << channel.channel_id << " (consulting) opened by "
            << person.passport.name << " with " << agent_passport.name << '\n';
  need(client::wait<std::string>(
           [&](auto done) { human->send(channel.channel_id, question, done); }),
       "send the question");
  std::cout << person.passport.name << " -> " << agent_passport.name << ": "
            << question << '\n';

  auto in_channel = [&](std::string_view type) {
    return [id = channel.channel_id, type](const Envelope& e) {
      return e.channel_id == id && e.event_type == type;
    };
  };
  auto reply = need(client::wait<Envelope>([&](auto done) {
                      human->next_envelope(
                          in_channel(client::event_type::kText), kWait, done);
                    }),
                    "wait for the reply");
  std::cout << agent_passport.name << " -> " << person.passport.name << ": "
            << client::text_of(reply) << '\n';
  auto closed =
      need(client::wait<Envelope>([&](auto done) {
             human->next_envelope(
                 in_channel(client::event_type::kChannelClosed), kWait, done);
           }),
           "wait for the close");
  std::cout << "channel closed: " << client::event_data_json(closed) << '\n';
  return client::event_data_json(closed).find("consulting_complete") !=
                 std::string::npos
             ? 0
             : 1;
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
