// The plugin tools of parley::client (engine/client/network_tools.h):
// delegate through a model's turn, and every action of peers, channels and
// context called as the default handler calls a tool. Every body runs over
// both links (tests/client_networks.h).
#include "engine/client/network_tools.h"

#include <doctest/doctest.h>

#include <boost/asio/post.hpp>
#include <mutex>
#include <nlohmann/json.hpp>

#include "engine/client/default_handler.h"
#include "engine/client/envelopes.h"
#include "engine/client/task.h"
#include "engine/registry/skill.h"
#include "tests/client_agents.h"

namespace parley::testing {
namespace {

using client::AgentClient;
using client::Envelope;
using client::ModelReply;
using client::ScriptedModel;
using nlohmann::json;
namespace event_type = client::event_type;

// Runs `tool` for `agent` on its strand, as a turn in `channel` would.
std::string run_tool(const client::Tool& tool,
                     const std::shared_ptr<AgentClient>& agent,
                     const json& arguments,
                     std::optional<client::ChannelMetadata> channel = {},
                     std::shared_ptr<client::Task> task = nullptr) {
  client::TurnDependencies dependencies;
  dependencies.task = std::move(task);
  dependencies.agent_client = agent;
  dependencies.hub = agent->hub_client();
  if (channel) {
    dependencies.channel =
        std::make_shared<const client::ChannelMetadata>(std::move(*channel));
  }
  auto result = client::wait<client::ToolResult>([&](auto done) {
    boost::asio::post(agent->hub_client()->executor(),
                      [&tool, dependencies, text = arguments.dump(), done] {
                        tool.run(text, dependencies, done);
                      });
  });
  REQUIRE_MESSAGE(result.has_value(), result.error().message);
  return result->text;
}

json as_json(const std::string& text) {
  json value = json::parse(text, nullptr, false);
  INFO(text);
  REQUIRE_FALSE(value.is_discarded());
  return value;
}

// An agent whose envelopes are acked and nothing more (no model turns).
template <typename Net>
std::shared_ptr<AgentClient> silent_agent(Net& net, client::Registration who) {
  auto agent = scripted_agent(
      net, std::move(who),
      std::make_shared<ScriptedModel>(std::vector<ModelReply>{}));
  agent->on_envelope(
      [](const Envelope&, client::Handler<void> done) { done({}); });
  return agent;
}

template <typename Net>
std::shared_ptr<AgentClient> silent_agent(Net& net, const std::string& name) {
  return silent_agent(net, named(name));
}

std::vector<std::string> names_in(const json& list) {
  std::vector<std::string> names;
  for (const json& item : list) names.push_back(item.at("name"));
  return names;
}

}  // namespace
}  // namespace parley::testing

using namespace parley::testing;
using nlohmann::json;
using parley::client::AgentClient;
using parley::client::Envelope;
using parley::client::ModelReply;
using parley::client::ScriptedModel;
namespace client = parley::client;
namespace engine = parley::engine;
namespace event_type = parley::client::event_type;
using Role = parley::client::ModelMessage::Role;

TYPE_TO_STRING(InProcessNet);
TYPE_TO_STRING(WsNet);

TEST_SUITE("client") {
  TEST_CASE_TEMPLATE(
      "delegate asks a peer in a consulting channel of its own and returns "
      "the reply",
      Net, InProcessNet, WsNet) {
    Net net;
    auto expert_model =
        std::make_shared<ScriptedModel>(ScriptedModel::texts({"42"}));
    auto expert = scripted_agent(net, "expert", expert_model);
    auto lead_model = std::make_shared<ScriptedModel>(std::vector<ModelReply>{
        client::tool_call_reply(
            "delegate",
            R"({"target":"expert","prompt":"6 times 7?","capability":"math"})"),
        {.text = "the expert says 42", .tool_calls = {}}});
    auto lead = scripted_agent(net, "lead", lead_model);
    auto [ada, seen] = human(net, "ada");
    auto channel = open(*ada, "conversation", "lead");
    send(*ada, channel.channel_id, "ask the expert");

    REQUIRE(seen->wait_until([](const std::vector<Envelope>& all) {
      return std::ranges::any_of(all, [](const Envelope& e) {
        return client::text_of(e) == "the expert says 42";
      });
    }));
    // The tool's result, the reply, was the model's last message.
    const auto requests = lead_model->requests();
    REQUIRE(requests.size() == 2);
    const client::ModelMessage& result = requests[1].messages.back();
    CHECK(result.role == Role::kTool);
    CHECK(result.tool_name == "delegate");
    CHECK(result.text == "42");
    // The consult: a consulting channel lead -> expert with the capability
    // knob, the prompt one level deeper and to the expert only, completed
    // by the reply; the lead's handler ran no turn in it.
    const auto consults =
        net.hub().list_channels(expert->agent_id(), std::nullopt, 10);
    REQUIRE(consults.size() == 1);
    const engine::ChannelMetadata& consult = consults.front();
    CHECK(consult.manifest.type == "consulting");
    CHECK(consult.creator_id == lead->agent_id());
    CHECK(json::parse(consult.knobs) == json{{"capability", "math"}});
    REQUIRE(eventually([&] {
      auto now = net.hub().get_channel(consult.channel_id);
      return now && now->close_reason == "consulting_complete";
    }));
    auto wal = net.hub().read_wal(consult.channel_id);
    REQUIRE(wal.has_value());
    const auto prompt = std::ranges::find_if(*wal, [](const Envelope& e) {
      return client::text_of(e) == "6 times 7?";
    });
    REQUIRE(prompt != wal->end());
    CHECK(prompt->sender_id == lead->agent_id());
    CHECK(prompt->audience == std::vector<std::string>{expert->agent_id()});
    CHECK(prompt->depth == 1);
    CHECK(expert_model->requests().size() == 1);
  }

  TEST_CASE_TEMPLATE(
      "delegate fails fast on a closed consult and times out on a silent "
      "one and refuses unknown targets and oneself",
      Net, InProcessNet, WsNet) {
    Net net;
    auto lead = silent_agent(net, "lead");
    const client::Tool delegate = client::delegate_tool();
    auto [quiet, quiet_seen] = human(net, "quiet");
    CHECK(run_tool(
              delegate, lead,
              {{"target", "quiet"}, {"prompt", "hello?"}, {"timeout", 0.2}}) ==
          "Error: delegate to 'quiet' timed out after 0.2s");

    // A human who closes every channel it is asked something in.
    auto [closer, closer_seen] = human(net, "closer");
    client::HumanClient* closing = closer.get();
    closer->on_envelope([closing](const Envelope& e) {
      if (e.event_type == event_type::kText) {
        closing->close_channel(e.channel_id, [](auto) {});
      }
    });
    CHECK(run_tool(delegate, lead, {{"target", "closer"}, {"prompt", "hi"}}) ==
          "Error: delegate to 'closer' channel closed: human_closed");

    CHECK(run_tool(delegate, lead, {{"target", "nobody"}, {"prompt", "hi"}}) ==
          "Error: target 'nobody' not found");
    CHECK(run_tool(delegate, lead, {{"target", "lead"}, {"prompt", "hi"}}) ==
          "Error: cannot delegate to yourself");
    CHECK(run_tool(delegate, lead, {{"target", "quiet"}}) ==
          "Error: delegate requires `target` and `prompt`");
  }

  TEST_CASE_TEMPLATE("peers finds and describes the other agents", Net,
                     InProcessNet, WsNet) {
    Net net;
    client::Registration coder = named("coder");
    coder.resume.summary = "Writes C++.";
    coder.resume.claimed_capabilities = {"cpp"};
    coder.skill_md = "---\nname: coder\n---\nI write C++.\n";
    client::Registration tester = named("tester");
    tester.resume.summary = "Tests code.";
    tester.resume.claimed_capabilities = {"cpp", "qa"};
    tester.resume.domains = {"quality"};
    auto coder_agent = silent_agent(net, coder);
    auto tester_agent = silent_agent(net, tester);
    auto lead = silent_agent(net, "lead");
    const client::Tool peers = client::peers_tool();

    const json cpp = as_json(run_tool(
        peers, lead,
        {{"action", "find"}, {"capability", "cpp"}, {"sort_by", "name"}}));
    CHECK(names_in(cpp) == std::vector<std::string>{"coder", "tester"});
    CHECK(cpp[1] == json{{"name", "tester"},
                         {"agent_id", tester_agent->agent_id()},
                         {"summary", "Tests code."},
                         {"capabilities", {"cpp", "qa"}},
                         {"observed_success_rate", nullptr},
                         {"cost", nullptr}});
    // Everybody but the caller; query matches the summary.
    CHECK(names_in(as_json(run_tool(peers, lead, {{"action", "find"}}))) ==
          std::vector<std::string>{"coder", "tester"});
    CHECK(names_in(as_json(run_tool(
              peers, lead, {{"action", "find"}, {"query", "TESTS"}}))) ==
          std::vector<std::string>{"tester"});

    const json described = as_json(
        run_tool(peers, lead, {{"action", "describe"}, {"name", "coder"}}));
    CHECK(described["skill_md"] == "---\nname: coder\n---\nI write C++.\n");
    CHECK(described["passport"]["name"] == "coder");
    CHECK(described["resume"]["claimed_capabilities"] == json{"cpp"});
    // No SKILL.md: the document rendered from passport and resume.
    const json fallback = as_json(
        run_tool(peers, lead, {{"action", "describe"}, {"name", "tester"}}));
    auto passport = net.hub().get_agent("tester");
    auto resume = net.hub().get_resume(tester_agent->agent_id());
    REQUIRE(passport.has_value());
    REQUIRE(resume.has_value());
    CHECK(fallback["skill_md"] ==
          engine::render_fallback_skill(*passport, *resume));
    CHECK(fallback["resume"] == json{{"summary", "Tests code."},
                                     {"claimed_capabilities", {"cpp", "qa"}},
                                     {"domains", {"quality"}},
                                     {"observed", json::object()}});

    CHECK(run_tool(peers, lead, {{"action", "describe"}, {"name", "ghost"}}) ==
          "Error: peer 'ghost' not found");
    CHECK(run_tool(peers, lead, {{"action", "dance"}}) ==
          "Error: unknown action 'dance'; choose from find, describe");
  }

  TEST_CASE_TEMPLATE(
      "channels opens with a first message then lists describes and closes",
      Net, InProcessNet, WsNet) {
    Net net;
    auto lead = silent_agent(net, "lead");
    auto [bob, bob_seen] = human(net, "bob");
    const client::Tool channels = client::channels_tool();

    const json opened = as_json(run_tool(channels, lead,
                                         {{"action", "open"},
                                          {"type", "conversation"},
                                          {"target", "bob"},
                                          {"message", "hello bob"}}));
    const std::string id = opened.at("channel_id");
    CHECK(opened.at("type") == "conversation");
    CHECK(opened.at("participants") == json{lead->agent_id(), bob->agent_id()});
    REQUIRE(bob_seen->wait_until([](const std::vector<Envelope>& all) {
      return std::ranges::any_of(all, [](const Envelope& e) {
        return client::text_of(e) == "hello bob";
      });
    }));
    const auto seen = bob_seen->all();
    const auto hello = std::ranges::find_if(seen, [](const Envelope& e) {
      return client::text_of(e) == "hello bob";
    });
    REQUIRE(hello != seen.end());
    CHECK(opened.at("seed_envelope_id") == hello->envelope_id);

    const json listed = as_json(run_tool(channels, lead, {{"action", "list"}}));
    CHECK(listed == json::array({{{"channel_id", id},
                                  {"type", "conversation"},
                                  {"state", "active"},
                                  {"participants", opened["participants"]}}}));
    const json info = as_json(
        run_tool(channels, lead, {{"action", "info"}, {"channel_id", id}}));
    CHECK(info["state"] == "active");
    CHECK(info["creator_id"] == lead->agent_id());
    CHECK(info["participants"][1] == json{{"agent_id", bob->agent_id()},
                                          {"role", "respondent"},
                                          {"order", 1}});

    // close defaults to the turn's channel.
    auto metadata = net.hub().get_channel(id);
    REQUIRE(metadata.has_value());
    CHECK(as_json(run_tool(channels, lead, {{"action", "close"}}, *metadata)) ==
          json{{"channel_id", id},
               {"state", "closed"},
               {"close_reason", "closed_by_agent"}});
    CHECK(as_json(run_tool(channels, lead, {{"action", "list"}})) ==
          json::array());
    CHECK(as_json(run_tool(
              channels, lead,
              {{"action", "list"}, {"state", "all"}}))[0]["state"] == "closed");

    // Another pair's channel is not the caller's to see (`parley serve`
    // does not even tell a connection it exists).
    auto [carol, carol_seen] = human(net, "carol");
    auto theirs = open(*bob, "conversation", "carol");
    CHECK(
        run_tool(channels, lead,
                 {{"action", "info"}, {"channel_id", theirs.channel_id}}) ==
        (std::is_same_v<Net, InProcessNet>
             ? "Error: not a participant of channel '" + theirs.channel_id + "'"
             : "Error: channel '" + theirs.channel_id + "' not found"));
    CHECK(run_tool(channels, lead,
                   {{"action", "open"}, {"type", "consulting"}}) ==
          "Error: open requires `type` and `target`");

    // A refused first message closes the channel it was meant to open.
    const std::string refused =
        run_tool(channels, lead,
                 {{"action", "open"},
                  {"type", "workflow"},
                  {"target", "bob"},
                  {"knobs",
                   {{"graph",
                     {{"initial_speaker", bob->agent_id()},
                      {"transitions", json::array()},
                      {"default_target", nullptr},
                      {"max_turns", 10}}}}},
                  {"message", "me first"}});
    const auto bobs =
        net.hub().list_channels(bob->agent_id(), std::nullopt, 10);
    const auto seeded = std::ranges::find_if(bobs, [](const auto& metadata) {
      return metadata.manifest.type == "workflow";
    });
    REQUIRE(seeded != bobs.end());
    CHECK(refused == "Error: seed send failed: workflow '" +
                         seeded->channel_id + "' expects '" + bob->agent_id() +
                         "' to speak, got '" + lead->agent_id() + "'");
    CHECK(seeded->close_reason == "seed_failed");
  }

  TEST_CASE_TEMPLATE("context searches and quotes the texts the caller may see",
                     Net, InProcessNet, WsNet) {
    Net net;
    auto lead = silent_agent(net, "lead");
    auto [bob, bob_seen] = human(net, "bob");
    // lead's handler acks no invite: lead opens.
    auto opened = client::wait<client::ChannelMetadata>([&](auto done) {
      lead->open({.type = "conversation", .targets = {"bob"}}, done);
    });
    REQUIRE_MESSAGE(opened.has_value(), opened.error().message);
    const client::ChannelMetadata channel = *opened;
    const std::string long_text = std::string(300, 'x') + " deadline";
    send(*bob, channel.channel_id, "The Deadline is Friday");
    send(*bob, channel.channel_id, "lunch?");
    send(*bob, channel.channel_id, long_text);
    // A text only bob may see.
    client::HumanClient& sender = *bob;  // a lambda may not capture a binding
    auto hidden = client::wait<std::string>([&](auto done) {
      sender.send(channel.channel_id, "secret deadline", done,
                  std::vector<std::string>{sender.agent_id()});
    });
    REQUIRE(hidden.has_value());
    const client::Tool context = client::context_tool();

    const json found = as_json(run_tool(
        context, lead, {{"action", "search"}, {"query", "deadline"}}, channel));
    REQUIRE(found.size() == 2);
    CHECK(found[0]["excerpt"] == "The Deadline is Friday");
    CHECK(found[0]["sender_id"] == bob->agent_id());
    CHECK(found[1]["excerpt"] == std::string(239, 'x') + "…");
    CHECK(as_json(run_tool(context, lead,
                           {{"action", "search"},
                            {"query", "deadline"},
                            {"limit", 1},
                            {"channel_id", channel.channel_id}}))
              .size() == 1);
    CHECK(as_json(run_tool(context, lead,
                           {{"action", "search"},
                            {"query", "deadline"},
                            {"scope", "knowledge"}})) == json::array());

    const json quoted = as_json(run_tool(
        context, lead,
        {{"action", "quote"}, {"speaker", "bob"}, {"recent_n", 2}}, channel));
    REQUIRE(quoted.size() == 2);
    CHECK(quoted[0]["text"] == "lunch?");
    CHECK(quoted[1]["text"] == long_text);
    CHECK(run_tool(context, lead, {{"action", "quote"}, {"speaker", "bob"}}) ==
          "Error: quote requires an active channel or `channel_id`");
    CHECK(run_tool(context, lead, {{"action", "recall"}}) ==
          "Error: unknown action 'recall'; choose from search, quote");
  }

  TEST_CASE_TEMPLATE(
      "tasks reports on the turn's task and observes and waits for and "
      "cancels others",
      Net, InProcessNet, WsNet) {
    Net net;
    auto worker = silent_agent(net, "worker");
    auto watcher = scripted_agent(
        net, "watcher",
        std::make_shared<ScriptedModel>(std::vector<ModelReply>{}));
    auto opened = client::wait<client::ChannelMetadata>([&](auto done) {
      worker->open({.type = "conversation", .targets = {"watcher"}}, done);
    });
    REQUIRE_MESSAGE(opened.has_value(), opened.error().message);
    auto start = [&](const std::string& title) {
      auto task = client::wait<std::shared_ptr<client::Task>>([&](auto done) {
        client::Task::start(worker, {.title = title, .capability = "search"},
                            opened->channel_id, done);
      });
      REQUIRE_MESSAGE(task.has_value(), task.error().message);
      return *task;
    };
    auto task = start("index the docs");
    const std::string& id = task->task_id();
    const client::Tool tasks = client::tasks_tool();

    CHECK(run_tool(tasks, worker, {{"action", "progress"}}) ==
          "Error: progress requires an active `agent.task(...)` block");
    CHECK(run_tool(tasks, worker,
                   {{"action", "progress"}, {"payload", {{"pages", 1}}}}, {},
                   task) == "progress emitted on " + id);
    auto stored = net.hub().get_task(id);
    REQUIRE(stored.has_value());
    CHECK(json::parse(stored->progress) == json{{"pages", 1}});
    CHECK(stored->channel_id == opened->channel_id);

    const json listed = as_json(run_tool(tasks, worker, {{"action", "list"}}));
    REQUIRE(listed.size() == 1);
    CHECK(listed[0]["task_id"] == id);
    CHECK(listed[0]["title"] == "index the docs");
    CHECK(listed[0]["capability"] == "search");
    CHECK(listed[0]["state"] == "running");
    CHECK(as_json(
              run_tool(tasks, watcher,
                       {{"action", "status"}, {"task_id", id}}))["owner_id"] ==
          worker->agent_id());
    CHECK(run_tool(tasks, watcher,
                   {{"action", "wait"}, {"task_id", id}, {"timeout", 0.3}}) ==
          "Error: task '" + id + "' did not complete within 0.3s");

    // complete, with the observation on the worker's track record.
    CHECK(run_tool(tasks, worker,
                   {{"action", "complete"}, {"result", {{"pages", 3}}}}, {},
                   task) == "completed " + id);
    const json waited = as_json(
        run_tool(tasks, watcher, {{"action", "wait"}, {"task_id", id}}));
    CHECK(waited["state"] == "completed");
    CHECK(waited["result"] == json{{"pages", 3}});
    auto resume = net.hub().get_resume(worker->agent_id());
    REQUIRE(resume.has_value());
    REQUIRE(resume->observed.contains("search"));
    CHECK(resume->observed.at("search").completed == 1);
    CHECK(as_json(run_tool(tasks, worker, {{"action", "list"}})) ==
          json::array());
    CHECK(
        as_json(run_tool(tasks, worker, {{"action", "list"}, {"state", "all"}}))
            .size() == 1);
    CHECK(run_tool(tasks, worker, {{"action", "progress"}}, {}, task) ==
          "Error: progress failed: task " + id + " is already completed");
    CHECK(run_tool(tasks, watcher, {{"action", "cancel"}, {"task_id", id}}) ==
          "task '" + id + "' is already completed");

    // A cancel request rides on the task's channel to its owner.
    auto second = start("index the code");
    CHECK(run_tool(tasks, watcher,
                   {{"action", "cancel"},
                    {"task_id", second->task_id()},
                    {"reason", "enough"}}) ==
          "cancel_request posted to " + worker->agent_id() + " for task " +
              second->task_id());
    auto wal = net.hub().read_wal(opened->channel_id);
    REQUIRE(wal.has_value());
    REQUIRE_FALSE(wal->empty());
    const Envelope& request = wal->back();
    CHECK(request.event_type == "ag2.task.cancel_request");
    CHECK(request.task_id == second->task_id());
    CHECK(request.audience == std::vector<std::string>{worker->agent_id()});
    CHECK(json::parse(client::event_data_json(request)) ==
          json{{"task_id", second->task_id()}, {"reason", "enough"}});
    CHECK(
        run_tool(tasks, watcher, {{"action", "status"}, {"task_id", "nope"}}) ==
        "Error: task 'nope' not found");
  }

  TEST_CASE_TEMPLATE(
      "a turn run under a task gives it to the tools the model calls", Net,
      InProcessNet, WsNet) {
    Net net;
    auto model = std::make_shared<ScriptedModel>(std::vector<ModelReply>{
        client::tool_call_reply(
            "tasks", R"({"action":"progress","payload":{"step":1}})"),
        {.text = "on it", .tool_calls = {}}});
    auto worker = scripted_agent(net, "worker", model);
    // Each text from someone else starts a task and runs the default turn
    // under it.
    std::mutex mutex;
    std::string task_id;
    worker->on_envelope([self = worker.get(), &mutex, &task_id](
                            const Envelope& envelope,
                            client::Handler<void> done) {
      if (envelope.event_type != event_type::kText ||
          envelope.sender_id == self->agent_id()) {
        return client::default_handler(envelope, *self, std::move(done));
      }
      client::Task::start(
          self->shared_from_this(), {.title = "answer"}, envelope.channel_id,
          [self, envelope, done, &mutex,
           &task_id](client::Result<std::shared_ptr<client::Task>> task) {
            if (!task) return done(std::unexpected(task.error()));
            {
              std::lock_guard lock(mutex);
              task_id = (*task)->task_id();
            }
            client::default_handler(envelope, *self, done, *task);
          });
    });
    auto [ada, seen] = human(net, "ada");
    auto channel = open(*ada, "conversation", "worker");
    send(*ada, channel.channel_id, "start");
    REQUIRE(seen->wait_until([](const std::vector<Envelope>& all) {
      return std::ranges::any_of(
          all, [](const Envelope& e) { return client::text_of(e) == "on it"; });
    }));
    std::lock_guard lock(mutex);
    auto task = net.hub().get_task(task_id);
    REQUIRE(task.has_value());
    CHECK(json::parse(task->progress) == json{{"step", 1}});
    const auto requests = model->requests();
    REQUIRE(requests.size() == 2);
    CHECK(requests[1].messages.back().text == "progress emitted on " + task_id);
  }

  TEST_CASE_TEMPLATE("attach_plugin false offers the adapter's tools only", Net,
                     InProcessNet, WsNet) {
    Net net;
    auto model = std::make_shared<ScriptedModel>(ScriptedModel::texts({"ok"}));
    client::AgentOptions options;
    options.attach_plugin = false;
    auto bare = scripted_agent(net, "bare", model, options);
    auto [ada, seen] = human(net, "ada");
    auto channel = open(*ada, "consulting", "bare");
    send(*ada, channel.channel_id, "well?");
    REQUIRE(seen->wait_for_type(event_type::kChannelClosed));
    const auto requests = model->requests();
    REQUIRE(requests.size() == 1);
    REQUIRE(requests[0].tools.size() == 1);
    CHECK(requests[0].tools[0].name == "say");
  }
}  // TEST_SUITE
