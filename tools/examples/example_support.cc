#include "tools/examples/example_support.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/client/envelopes.h"
#include "engine/client/scripted_model.h"
#include "log/rocksdb_log_store.h"

namespace parley::examples {

ExampleNetwork::ExampleNetwork(std::string url) : url_(std::move(url)) {
  if (!url_.empty()) return;
  std::string pattern =
      (std::filesystem::temp_directory_path() / "parley-example-XXXXXX")
          .string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  dir_.path = pattern;
  auto store = log::open_rocksdb_log_store(dir_.path / "store");
  if (!store) throw std::runtime_error("cannot open the store");
  engine::HubOptions options;
  options.store = std::shared_ptr<log::LogStore>(std::move(store->store));
  auto opened = engine::Hub::open(std::move(options));
  if (!opened) throw std::runtime_error(opened.error().message);
  hub_ = std::move(*opened);
}

ExampleNetwork::~ExampleNetwork() {
  for (const auto& weak : clients_) {
    if (auto client = weak.lock()) client::close_and_wait(*client);
  }
  // Closed while the io thread runs: the calls still in the hub complete
  // now, onto the clients' strands, which die with the io thread.
  if (hub_) (void)hub_->close();
}

ExampleNetwork::TempDir::~TempDir() {
  if (path.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

std::shared_ptr<client::HubClient> ExampleNetwork::connect() {
  auto client = hub_ ? client::HubClient::in_process(io_.executor(), *hub_)
                     : need(client::wait<std::shared_ptr<client::HubClient>>(
                                [&](auto done) {
                                  client::HubClient::connect(io_.executor(),
                                                             url_, {}, done);
                                }),
                            "connect to " + url_);
  clients_.push_back(client);
  return client;
}

std::string unique_name(std::string_view prefix) {
  return std::string(prefix) + "-" + std::to_string(getpid());
}

std::shared_ptr<client::HumanClient> register_human(ExampleNetwork& network,
                                                    std::string_view prefix) {
  client::Registration registration;
  registration.passport.name = unique_name(prefix);
  return need(
      client::wait<std::shared_ptr<client::HumanClient>>([&](auto done) {
        client::HumanClient::register_human(network.connect(), registration, {},
                                            done);
      }),
      "register " + registration.passport.name);
}

std::shared_ptr<client::AgentClient> register_headless(
    ExampleNetwork& network, std::string_view prefix) {
  client::Registration registration;
  registration.passport.name = unique_name(prefix);
  auto no_model = std::make_shared<client::ScriptedModel>(
      std::vector<client::ModelReply>{});
  client::AgentOptions options;
  options.attach_plugin = false;
  return need(
      client::wait<std::shared_ptr<client::AgentClient>>([&](auto done) {
        client::AgentClient::register_agent(network.connect(), registration,
                                            no_model, options, done);
      }),
      "register " + registration.passport.name);
}

client::ChannelMetadata open_channel(client::HumanClient& human,
                                     client::OpenRequest request) {
  const std::string type = request.type;
  auto channel = need(client::wait<client::ChannelMetadata>([&](auto done) {
                        human.open(std::move(request), done);
                      }),
                      "open a " + type + " channel");
  std::cout << "channel " << channel.channel_id << " (" << type
            << ") opened by " << human.passport().name << '\n';
  return channel;
}

void say(client::HumanClient& human, const std::string& channel_id,
         const std::string& text) {
  need(client::wait<std::string>(
           [&](auto done) { human.send(channel_id, text, done); }),
       "send '" + text + "'");
  std::cout << human.passport().name << ": " << text << '\n';
}

client::Envelope next_in_channel(client::HumanClient& human,
                                 const std::string& channel_id,
                                 std::vector<std::string_view> types) {
  using namespace std::chrono_literals;
  return need(client::wait<client::Envelope>([&](auto done) {
                human.next_envelope(
                    [channel_id, types](const client::Envelope& e) {
                      return e.channel_id == channel_id &&
                             std::ranges::find(types, e.event_type) !=
                                 types.end();
                    },
                    30s, done);
              }),
              "wait in channel " + channel_id);
}

bool closed_with(const client::Envelope& closed, std::string_view reason) {
  const nlohmann::json data =
      nlohmann::json::parse(client::event_data_json(closed));
  std::cout << "channel closed: " << data.dump() << '\n';
  return data.value("reason", "") == reason;
}

int consult(client::HumanClient& human, const std::string& target,
            const std::string& question) {
  const auto channel =
      open_channel(human, {.type = "consulting", .targets = {target}});
  say(human, channel.channel_id, question);
  const auto reply =
      next_in_channel(human, channel.channel_id, {client::event_type::kText});
  std::cout << target << ": " << client::text_of(reply) << '\n';
  const auto closed = next_in_channel(human, channel.channel_id,
                                      {client::event_type::kChannelClosed});
  return closed_with(closed, "consulting_complete") ? 0 : 1;
}

}  // namespace parley::examples
