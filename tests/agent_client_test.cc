// parley::client's AgentClient and its default handler, with a ScriptedModel
// and a HumanClient. Every end-to-end body runs twice, once per link: an
// embedded Hub, and a real `parley serve` on loopback
// (tests/client_networks.h).
#include "engine/client/agent_client.h"

#include <doctest/doctest.h>

#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "engine/adapters/builtin_adapters.h"
#include "engine/client/default_handler.h"
#include "engine/client/envelopes.h"
#include "engine/client/hooks.h"
#include "engine/client/scripted_model.h"
#include "log/rocksdb_log_store.h"
#include "tests/client_agents.h"
#include "tools/script_runner.h"

namespace parley::testing {
namespace {

using client::AgentClient;
using client::Envelope;
using client::HumanClient;
using client::ModelMessage;
using client::ModelReply;
using client::Result;
using client::ScriptedModel;
using client::wait;
namespace event_type = client::event_type;
using Role = client::ModelMessage::Role;

// Waits for the agent's reply to `question` among what the human saw.
Envelope reply_to(Recorder& seen, const std::string& question) {
  Envelope reply;
  REQUIRE(seen.wait_until([&](const std::vector<Envelope>& all) {
    for (const Envelope& e : all) {
      if (e.causation_id == question && e.event_type != "ag2.channel.invite") {
        reply = e;
        return true;
      }
    }
    return false;
  }));
  return reply;
}

std::vector<std::pair<Role, std::string>> roles_and_texts(
    const std::vector<ModelMessage>& messages) {
  std::vector<std::pair<Role, std::string>> out;
  for (const auto& m : messages) out.emplace_back(m.role, m.text);
  return out;
}

// The hub's folded adapter state equals the client's fold of the WAL.
void check_same_fold(engine::Hub& hub, const std::string& channel_id) {
  auto metadata = hub.get_channel(channel_id);
  REQUIRE(metadata.has_value());
  auto wal = hub.read_wal(channel_id);
  REQUIRE(wal.has_value());
  auto adapters = engine::builtin_adapters();
  const auto adapter = std::ranges::find_if(adapters, [&](const auto& a) {
    return a->manifest().type == metadata->manifest.type;
  });
  REQUIRE(adapter != adapters.end());
  auto folded = client::fold_channel(**adapter, *metadata, *wal);
  REQUIRE_MESSAGE(folded.has_value(), folded.error().message);
  auto hub_state = hub.adapter_state(channel_id);
  REQUIRE(hub_state.has_value());
  REQUIRE(hub_state->has_value());
  CHECK(nlohmann::json::parse((*folded)->to_json()) ==
        nlohmann::json::parse(**hub_state));
}

// Runs tests/golden/scripts/<name>.jsonl against a hub on `store`.
void run_golden_script(const std::string& name,
                       const std::filesystem::path& store) {
  auto runner = engine::ScriptRunner::start(
      [&]() -> engine::Result<std::shared_ptr<log::LogStore>> {
        auto opened = log::open_rocksdb_log_store(store);
        REQUIRE(opened.has_value());
        return std::shared_ptr<log::LogStore>(std::move(opened->store));
      });
  REQUIRE(runner.has_value());
  std::ifstream in(std::string(PARLEY_GOLDEN_DIR "/scripts/") + name +
                   ".jsonl");
  REQUIRE(in.good());
  for (std::string line; std::getline(in, line);) (*runner)->run_line(line);
}

}  // namespace
}  // namespace parley::testing

using namespace parley::testing;
using parley::client::AgentClient;
using parley::client::Envelope;
using parley::client::ModelReply;
using parley::client::Result;
using parley::client::ScriptedModel;
using parley::client::wait;
namespace client = parley::client;
namespace engine = parley::engine;
namespace event_type = parley::client::event_type;
using Role = parley::client::ModelMessage::Role;

TYPE_TO_STRING(InProcessNet);
TYPE_TO_STRING(WsNet);

TEST_SUITE("client") {
  TEST_CASE_TEMPLATE(
      "an agent with a scripted model answers a human's consulting question",
      Net, InProcessNet, WsNet) {
    Net net;
    auto model = std::make_shared<ScriptedModel>(ScriptedModel::texts({"42"}));
    auto analyst = scripted_agent(net, "analyst", model);
    auto [ada, seen] = human(net, "ada");

    // The agent's default handler acks the invite: open returns active.
    auto channel = open(*ada, "consulting", "analyst");
    CHECK(channel.state == engine::ChannelState::kActive);
    const std::string question = send(*ada, channel.channel_id, "6 times 7?");

    const Envelope reply = reply_to(*seen, question);
    CHECK(reply.event_type == event_type::kText);
    CHECK(client::text_of(reply) == "42");
    CHECK(reply.sender_id == analyst->agent_id());
    REQUIRE(seen->wait_for_type(event_type::kChannelClosed));
    CHECK(client::event_data_json(seen->all().back())
              .find("consulting_complete") != std::string::npos);

    // One model call (lifecycle envelopes run no turn): the identity line,
    // no history before the question, the question as the prompt, the
    // adapter's say offered to the respondent, then the plugin's tools.
    REQUIRE(eventually([&] {
      auto state = net.hub().get_channel(channel.channel_id);
      return state && state->state == engine::ChannelState::kClosed;
    }));
    const auto requests = model->requests();
    REQUIRE(requests.size() == 1);
    CHECK(roles_and_texts(requests[0].messages) ==
          std::vector<std::pair<Role, std::string>>{
              {Role::kSystem,
               "You are analyst (agent_id: " + analyst->agent_id() + ")."},
              {Role::kUser, "6 times 7?"}});
    std::vector<std::string> offered;
    for (const auto& tool : requests[0].tools) offered.push_back(tool.name);
    CHECK(offered == std::vector<std::string>{"say", "delegate", "peers",
                                              "channels", "tasks", "context"});
    check_same_fold(net.hub(), channel.channel_id);
  }

  TEST_CASE_TEMPLATE(
      "an agent holds a conversation with a human and sees its history", Net,
      InProcessNet, WsNet) {
    Net net;
    auto model = std::make_shared<ScriptedModel>(
        ScriptedModel::texts({"hello ada", "fine, thanks"}));
    client::AgentOptions options;
    options.instructions = "Be brief.";
    auto bot = scripted_agent(net, "bot", model, options);
    auto [ada, seen] = human(net, "ada");
    auto channel = open(*ada, "conversation", "bot");

    const std::string first = send(*ada, channel.channel_id, "hi bot");
    CHECK(client::text_of(reply_to(*seen, first)) == "hello ada");
    const std::string second = send(*ada, channel.channel_id, "how are you?");
    CHECK(client::text_of(reply_to(*seen, second)) == "fine, thanks");

    const auto requests = model->requests();
    REQUIRE(requests.size() == 2);
    // The conversation's default view (windowed_summary, 10) shows the
    // first exchange as history: ada's line as user, the agent's own as
    // assistant.
    CHECK(roles_and_texts(requests[1].messages) ==
          std::vector<std::pair<Role, std::string>>{
              {Role::kSystem,
               "You are bot (agent_id: " + bot->agent_id() + ").\n\nBe brief."},
              {Role::kUser, "hi bot"},
              {Role::kAssistant, "hello ada"},
              {Role::kUser, "how are you?"}});

    HumanClient& closer = *ada;  // a lambda may not capture a binding
    auto closed = wait<client::ChannelMetadata>(
        [&](auto done) { closer.close_channel(channel.channel_id, done); });
    REQUIRE_MESSAGE(closed.has_value(), closed.error().message);
    CHECK(closed->state == engine::ChannelState::kClosed);
    check_same_fold(net.hub(), channel.channel_id);
  }

  TEST_CASE_TEMPLATE(
      "a consulting agent that calls say and also replies trips the "
      "double-send protocol error",
      Net, InProcessNet, WsNet) {
    Net net;
    // The model speaks through say, then also answers with a body.
    auto model = std::make_shared<ScriptedModel>(std::vector<ModelReply>{
        client::tool_call_reply("say", R"({"content":"via say"})"),
        {.text = "and a body", .tool_calls = {}}});
    auto analyst = scripted_agent(net, "analyst", model);
    // A custom handler that delegates to the default one and keeps what it
    // reported for the question.
    std::mutex mutex;
    std::optional<Result<void>> outcome;
    analyst->on_envelope(
        [client = analyst.get(), &mutex, &outcome](const Envelope& envelope,
                                                   client::Handler<void> done) {
          const bool text = envelope.event_type == event_type::kText;
          client::default_handler(
              envelope, *client,
              [text, done, &mutex, &outcome](Result<void> result) {
                if (text) {
                  std::lock_guard lock(mutex);
                  outcome = result;
                }
                done(std::move(result));
              });
        });
    auto [ada, seen] = human(net, "ada");
    auto channel = open(*ada, "consulting", "analyst");
    send(*ada, channel.channel_id, "what now?");

    REQUIRE(eventually([&] {
      std::lock_guard lock(mutex);
      return outcome.has_value();
    }));
    std::lock_guard lock(mutex);
    REQUIRE_FALSE(outcome->has_value());
    CHECK(outcome->error().code == client::code::kProtocol);
    CHECK(outcome->error().message ==
          "channel '" + channel.channel_id + "' is closed");
    // The say was the reply: it completed the channel.
    REQUIRE(seen->wait_for_type(event_type::kChannelClosed));
    CHECK(seen->texts() == std::vector<std::string>{"via say"});
    // The model saw say's result before answering.
    const auto requests = model->requests();
    REQUIRE(requests.size() == 2);
    const ModelMessage& result = requests[1].messages.back();
    CHECK(result.role == Role::kTool);
    CHECK(result.tool_name == "say");
    CHECK(result.text.starts_with("posted "));
  }

  TEST_CASE_TEMPLATE(
      "a replaced handler runs instead of the default and can be removed", Net,
      InProcessNet, WsNet) {
    Net net;
    auto model = std::make_shared<ScriptedModel>(
        ScriptedModel::texts({"from the model"}));
    auto gateway = scripted_agent(net, "gateway", model);
    // A gateway: forwards text to a queue, delegates everything else.
    auto queue = std::make_shared<Recorder>();
    gateway->on_envelope(
        [client = gateway.get(), queue](const Envelope& envelope,
                                        client::Handler<void> done) {
          if (envelope.event_type != event_type::kText) {
            return client::default_handler(envelope, *client, done);
          }
          queue->add(envelope);
          done({});
        });
    auto [ada, seen] = human(net, "ada");
    auto channel = open(*ada, "conversation", "gateway");  // invite acked
    send(*ada, channel.channel_id, "file this");
    REQUIRE(queue->wait_until([](const auto& q) { return q.size() == 1; }));
    CHECK(queue->texts() == std::vector<std::string>{"file this"});
    CHECK(model->requests().empty());

    // Restored: the next text runs the model again.
    gateway->remove_envelope_handler();
    const std::string question = send(*ada, channel.channel_id, "and this?");
    CHECK(client::text_of(reply_to(*seen, question)) == "from the model");
    CHECK(queue->all().size() == 1);
  }

  TEST_CASE_TEMPLATE(
      "two agents take their turns in a human's discussion round robin", Net,
      InProcessNet, WsNet) {
    Net net;
    auto first_model =
        std::make_shared<ScriptedModel>(ScriptedModel::texts({"I say yes"}));
    auto second_model =
        std::make_shared<ScriptedModel>(ScriptedModel::texts({"I say no"}));
    auto first = scripted_agent(net, "first", first_model);
    auto second = scripted_agent(net, "second", second_model);
    auto [ada, seen] = human(net, "ada");
    HumanClient& chair = *ada;  // a lambda may not capture a binding
    auto opened = wait<client::ChannelMetadata>([&](auto done) {
      chair.open({.type = "discussion", .targets = {"first", "second"}}, done);
    });
    REQUIRE_MESSAGE(opened.has_value(), opened.error().message);
    send(chair, opened->channel_id, "Ship on Friday?");

    // The creator speaks first, then each participant in order; then it is
    // the creator's turn again, so nobody else speaks.
    REQUIRE(seen->wait_until([](const std::vector<Envelope>& all) {
      return std::ranges::count(all, std::string(event_type::kText),
                                &Envelope::event_type) >= 2;
    }));
    auto wal = net.hub().read_wal(opened->channel_id);
    REQUIRE(wal.has_value());
    std::vector<std::pair<std::string, std::string>> spoken;
    for (const Envelope& e : *wal) {
      if (e.event_type == event_type::kText) {
        spoken.emplace_back(e.sender_id, client::text_of(e));
      }
    }
    CHECK(spoken == std::vector<std::pair<std::string, std::string>>{
                        {ada->agent_id(), "Ship on Friday?"},
                        {first->agent_id(), "I say yes"},
                        {second->agent_id(), "I say no"}});
    CHECK(net.hub()
              .adapter_state(opened->channel_id)
              .value()
              .value()
              .find("\"expected_next_speaker\":\"" + ada->agent_id() + "\"") !=
          std::string::npos);
    // Each ran one turn under the named view. Which envelope the second's
    // turn answers is a race, as in AG2: its handler may see the human's
    // question after the first already answered, when it is already the
    // second's turn (can_send is asked then), and answer that.
    const auto requests = second_model->requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].messages[1] ==
          client::ModelMessage{.role = Role::kUser,
                               .text = "[ada]: Ship on Friday?"});
    CHECK(first_model->requests().size() == 1);
    check_same_fold(net.hub(), opened->channel_id);
  }

  TEST_CASE_TEMPLATE("an agent sends custom envelopes and opens channels", Net,
                     InProcessNet, WsNet) {
    Net net;
    auto quiet = std::make_shared<ScriptedModel>(std::vector<ModelReply>{});
    auto alice = scripted_agent(net, "alice", quiet);
    auto [bob, seen] = human(net, "bob");
    auto channel = wait<client::ChannelMetadata>([&](auto done) {
      alice->open({.type = "conversation", .targets = {"bob"}}, done);
    });
    REQUIRE_MESSAGE(channel.has_value(), channel.error().message);
    auto review =
        client::make_envelope(channel->channel_id, "", "myapp.review_request",
                              R"({"document_id":"doc-123"})",
                              std::vector<std::string>{bob->agent_id()});
    REQUIRE(review.has_value());
    auto posted = wait<std::string>(
        [&](auto done) { alice->send_envelope(*review, done); });
    REQUIRE_MESSAGE(posted.has_value(), posted.error().message);
    REQUIRE(seen->wait_for_type("myapp.review_request"));
    const Envelope got = seen->all().back();
    CHECK(got.sender_id == alice->agent_id());
    CHECK(client::event_data_json(got) == R"({"document_id":"doc-123"})");
  }
}  // TEST_SUITE

TEST_SUITE("client") {
  TEST_CASE("the client folds the same channel state the hub folds") {
    // Every channel the golden scripts leave in a hub, folded by the hub and
    // by the client's fold_channel from the hub's WAL.
    for (const std::string name : {"basics", "random-1", "random-2", "random-3",
                                   "random-4", "random-5"}) {
      CAPTURE(name);
      ScratchDir data;
      run_golden_script(name, data.path() / "store");
      auto opened = parley::log::open_rocksdb_log_store(data.path() / "store");
      REQUIRE(opened.has_value());
      engine::HubOptions options;
      options.store =
          std::shared_ptr<parley::log::LogStore>(std::move(opened->store));
      auto hub = engine::Hub::open(std::move(options));
      REQUIRE_MESSAGE(hub.has_value(), error_message(hub));
      std::size_t compared = 0;
      for (const auto& channel :
           (*hub)->list_channels(std::nullopt, std::nullopt, 100000)) {
        CAPTURE(channel.channel_id);
        auto state = (*hub)->adapter_state(channel.channel_id);
        if (!state || !state->has_value()) continue;
        check_same_fold(**hub, channel.channel_id);
        ++compared;
      }
      MESSAGE(name << ": " << compared << " channels compared");
      CHECK(compared > 0);
      (void)(*hub)->close();
    }
  }
}
