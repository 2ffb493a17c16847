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
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "engine/client/agent_client.h"
#include "engine/client/blocking.h"
#include "engine/client/envelopes.h"
#include "engine/client/human_client.h"
#include "engine/client/scripted_model.h"
#include "engine/hub/hub.h"
#include "log/rocksdb_log_store.h"

namespace {

using namespace parley;
using namespace std::chrono_literals;
using client::Envelope;

// A temporary directory, removed on exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "parley-example-qa-XXXXXX")
            .string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

template <typename T>
T need(client::Result<T> result, std::string_view what) {
  if (!result) {
    throw std::runtime_error(std::string(what) + ": " + result.error().code +
                             ": " + result.error().message);
  }
  return std::move(*result);
}

int run(const std::string& url, const std::string& question) {
  std::unique_ptr<TempDir> dir;
  std::unique_ptr<engine::Hub> hub;
  // Declared after the hub, so destroyed before it: the clients' closes,
  // posted to it as they go, still reach a live hub.
  client::IoThread io;
  auto connect = [&]() -> std::shared_ptr<client::HubClient> {
    if (hub) return client::HubClient::in_process(io.executor(), *hub);
    return need(
        client::wait<std::shared_ptr<client::HubClient>>([&](auto done) {
          client::HubClient::connect(io.executor(), url, {}, done);
        }),
        "connect to " + url);
  };
  if (url.empty()) {
    dir = std::make_unique<TempDir>();
    auto store = log::open_rocksdb_log_store(dir->path / "store");
    if (!store) throw std::runtime_error("cannot open the store");
    engine::HubOptions options;
    options.store = std::shared_ptr<log::LogStore>(std::move(store->store));
    auto opened = engine::Hub::open(std::move(options));
    if (!opened) throw std::runtime_error(opened.error().message);
    hub = std::move(*opened);
  }
  const std::string suffix = std::to_string(getpid());

  // The agent, on its own connection, with a model that has one answer.
  client::Registration agent;
  agent.passport.name = "answerer-" + suffix;
  auto model =
      std::make_shared<client::ScriptedModel>(client::ScriptedModel::texts(
          {"Ship it on Thursday; the tests are green."}));
  const auto answerer = need(
      client::wait<std::shared_ptr<client::AgentClient>>([&](auto done) {
        client::AgentClient::register_agent(connect(), agent, model, {}, done);
      }),
      "register the agent");
  const client::Passport& agent_passport = answerer->passport();

  // The human, on another connection.
  client::Registration person;
  person.passport.name = "asker-" + suffix;
  auto human =
      need(client::wait<std::shared_ptr<client::HumanClient>>([&](auto done) {
             client::HumanClient::register_human(connect(), person, {}, done);
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
                          in_channel(client::event_type::kText), 10s, done);
                    }),
                    "wait for the reply");
  std::cout << agent_passport.name << " -> " << person.passport.name << ": "
            << client::text_of(reply) << '\n';
  auto closed =
      need(client::wait<Envelope>([&](auto done) {
             human->next_envelope(
                 in_channel(client::event_type::kChannelClosed), 10s, done);
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
