// Agents and humans for client test bodies that run over either link
// (tests/client_networks.h): registration, opening and sending, each
// REQUIRE-ing success.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>

#include "engine/client/agent_client.h"
#include "engine/client/human_client.h"
#include "engine/client/scripted_model.h"
#include "tests/client_networks.h"

namespace parley::testing {

inline client::Registration named(std::string name) {
  client::Registration registration;
  registration.passport.name = std::move(name);
  return registration;
}

template <typename Net>
std::shared_ptr<client::AgentClient> scripted_agent(
    Net& net, client::Registration registration,
    std::shared_ptr<client::ScriptedModel> model,
    client::AgentOptions options = {}) {
  auto agent =
      client::wait<std::shared_ptr<client::AgentClient>>([&](auto done) {
        client::AgentClient::register_agent(net.connect(), registration, model,
                                            std::move(options), done);
      });
  REQUIRE_MESSAGE(agent.has_value(), agent.error().message);
  return *agent;
}

template <typename Net>
std::shared_ptr<client::AgentClient> scripted_agent(
    Net& net, const std::string& name,
    std::shared_ptr<client::ScriptedModel> model,
    client::AgentOptions options = {}) {
  return scripted_agent(net, named(name), std::move(model), std::move(options));
}

// A human on its own connection, recording what reaches it.
template <typename Net>
std::pair<std::shared_ptr<client::HumanClient>, std::shared_ptr<Recorder>>
human(Net& net, const std::string& name) {
  auto registered =
      client::wait<std::shared_ptr<client::HumanClient>>([&](auto done) {
        client::HumanClient::register_human(net.connect(), named(name), {},
                                            done);
      });
  REQUIRE_MESSAGE(registered.has_value(), registered.error().message);
  auto seen = std::make_shared<Recorder>();
  (*registered)->on_envelope([seen](const client::Envelope& e) {
    seen->add(e);
  });
  return {*registered, seen};
}

inline client::ChannelMetadata open(client::HumanClient& human,
                                    const std::string& type,
                                    const std::string& target) {
  auto opened = client::wait<client::ChannelMetadata>([&](auto done) {
    human.open({.type = type, .targets = {target}}, done);
  });
  REQUIRE_MESSAGE(opened.has_value(), opened.error().message);
  return *opened;
}

inline std::string send(client::HumanClient& human, const std::string& channel,
                        const std::string& text) {
  auto sent = client::wait<std::string>(
      [&](auto done) { human.send(channel, text, done); });
  REQUIRE_MESSAGE(sent.has_value(), sent.error().message);
  return *sent;
}

}  // namespace parley::testing
