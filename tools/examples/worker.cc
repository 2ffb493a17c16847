// parley-example-worker: a headless worker, an agent without a model.
//
//   parley-example-worker [--url ws://HOST:PORT] [--text TEXT]
//
// The worker is an AgentClient whose handler is replaced: it answers each
// text it is sent with a word count, and hands everything else (the
// invite, lifecycle envelopes) to the default handler, which acks the
// invite. A human opens a consulting channel to it and sends `text`.
// Prints what they exchanged; exits 0 when the channel closed with
// consulting_complete, 1 otherwise. Without --url both run on an
// in-process hub.
#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>

#include "engine/client/agent_client.h"
#include "engine/client/default_handler.h"
#include "engine/client/envelopes.h"
#include "engine/client/human_client.h"
#include "engine/client/scripted_model.h"
#include "tools/examples/example_network.h"

namespace {

using namespace parley;
using namespace std::chrono_literals;
using client::Envelope;
using examples::need;

constexpr auto kWait = 30s;

std::string count_words(std::string_view text) {
  std::istringstream words{std::string(text)};
  std::size_t count = 0;
  for (std::string word; words >> word;) ++count;
  return std::to_string(count) + (count == 1 ? " word" : " words");
}

int run(const std::string& url, const std::string& text) {
  examples::ExampleNetwork network(url);

  client::Registration registration;
  registration.passport.name = examples::unique_name("counter");
  // No model is ever called: the handler below answers.
  auto no_model = std::make_shared<client::ScriptedModel>(
      std::vector<client::ModelReply>{});
  client::AgentOptions options;
  options.attach_plugin = false;
  const auto worker =
      need(client::wait<std::shared_ptr<client::AgentClient>>([&](auto done) {
             client::AgentClient::register_agent(
                 network.connect(), registration, no_model, options, done);
           }),
           "register the worker");
  // The handler holds the client by raw pointer: the client owns it.
  worker->on_envelope([self = worker.get()](const Envelope& envelope,
                                            client::Handler<void> done) {
    if (envelope.event_type != client::event_type::kText ||
        envelope.sender_id == self->agent_id()) {
      return client::default_handler(envelope, *self, std::move(done));
    }
    self->send(
        envelope.channel_id, count_words(client::text_of(envelope)),
        [done](client::Result<std::string> sent) {
          if (!sent) return done(std::unexpected(sent.error()));
          done({});
        },
        std::nullopt, envelope.envelope_id);
  });

  client::Registration person;
  person.passport.name = examples::unique_name("asker");
  auto human =
      need(client::wait<std::shared_ptr<client::HumanClient>>([&](auto done) {
             client::HumanClient::register_human(network.connect(), person, {},
                                                 done);
           }),
           "register the human");
  auto channel = need(client::wait<client::ChannelMetadata>([&](auto done) {
                        human->open({.type = "consulting",
                                     .targets = {registration.passport.name}},
                                    done);
                      }),
                      "open the consulting channel");
  need(client::wait<std::string>(
           [&](auto done) { human->send(channel.channel_id, text, done); }),
       "send the text");
  std::cout << person.passport.name << " -> " << registration.passport.name
            << ": " << text << '\n';

  auto in_channel = [&](std::string_view type) {
    return [id = channel.channel_id, type](const Envelope& e) {
      return e.channel_id == id && e.event_type == type;
    };
  };
  auto reply = need(client::wait<Envelope>([&](auto done) {
                      human->next_envelope(
                          in_channel(client::event_type::kText), kWait, done);
                    }),
                    "wait for the count");
  std::cout << registration.passport.name << " -> " << person.passport.name
            << ": " << client::text_of(reply) << '\n';
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
  CLI::App app{"A headless worker answering without a model"};
  std::string url;
  std::string text = "count the words in this sentence";
  app.add_option("--url", url, "ws://HOST:PORT of a hub (default: in-process)");
  app.add_option("--text", text, "what the human sends");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(url, text);
  } catch (const std::exception& e) {
    std::cerr << "parley-example-worker: " << e.what() << '\n';
    return 1;
  }
}
