// parley::client views (engine/client/views.h): the built-ins, audience,
// custom views by name, resolve_view_policy, and the same projection as
// `parley view`.
#include <doctest/doctest.h>

#include <boost/asio/post.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/adapters/builtin_adapters.h"
#include "engine/client/agent_client.h"
#include "engine/client/envelopes.h"
#include "engine/client/hooks.h"
#include "engine/client/scripted_model.h"
#include "log/rocksdb_log_store.h"
#include "tests/client_networks.h"
#include "tools/script_runner.h"

namespace parley::testing {
namespace {

using client::Envelope;
using client::ModelItem;
using Kind = client::ModelItem::Kind;

std::shared_ptr<const engine::ChannelAdapter> builtin(std::string_view type) {
  for (auto& adapter : engine::builtin_adapters()) {
    if (adapter->manifest().type == type) return adapter;
  }
  FAIL("no built-in adapter " << type);
  return nullptr;
}

// A channel of `type` created by "alice" with the other `participants`.
client::ChannelMetadata channel_of(std::string_view type,
                                   std::vector<std::string> participants) {
  client::ChannelMetadata metadata;
  metadata.channel_id = "c1";
  metadata.manifest = builtin(type)->manifest();
  metadata.creator_id = "alice";
  metadata.state = engine::ChannelState::kActive;
  metadata.participants.push_back({.agent_id = "alice", .role = "initiator"});
  for (std::string& id : participants) {
    metadata.participants.push_back(
        {.agent_id = std::move(id), .role = "participant"});
  }
  return metadata;
}

Envelope text(std::string sender, std::string body,
              std::optional<std::vector<std::string>> audience = {}) {
  static int next = 0;
  Envelope envelope =
      client::text_envelope("c1", std::move(sender), body, std::move(audience));
  envelope.envelope_id = "e" + std::to_string(++next);
  return envelope;
}

std::vector<std::pair<Kind, std::string>> kinds_and_texts(
    const std::vector<ModelItem>& items) {
  std::vector<std::pair<Kind, std::string>> out;
  for (const auto& item : items) out.emplace_back(item.kind, item.text);
  return out;
}

std::vector<ModelItem> project(const client::ViewPolicy& view,
                               const std::vector<Envelope>& log,
                               std::string_view participant) {
  const auto adapter = builtin("conversation");
  const auto metadata = channel_of("conversation", {"bob"});
  return view.project(log, participant, metadata,
                      client::ViewContext::for_adapter(*adapter));
}

// Shows only one sender's texts (the seed's custom-view example).
class FromOneOnly final : public client::ViewPolicy {
 public:
  explicit FromOneOnly(std::string sender) : sender_(std::move(sender)) {}
  std::string_view name() const override { return "from_one_only"; }
  std::vector<ModelItem> project(std::span<const Envelope> history,
                                 std::string_view participant_id,
                                 const client::ChannelMetadata&,
                                 const client::ViewContext&) const override {
    std::vector<ModelItem> out;
    for (const Envelope& envelope : history) {
      if (envelope.event_type != client::event_type::kText ||
          envelope.sender_id != sender_) {
        continue;
      }
      out.push_back({.kind = envelope.sender_id == participant_id
                                 ? Kind::kAssistant
                                 : Kind::kUser,
                     .text = client::text_of(envelope)});
    }
    return out;
  }

 private:
  std::string sender_;
};

std::shared_ptr<client::AgentClient> registered_agent(
    InProcessNet& net, client::AgentOptions options = {}) {
  client::Registration registration;
  registration.passport.name = "viewer";
  auto agent =
      client::wait<std::shared_ptr<client::AgentClient>>([&](auto done) {
        client::AgentClient::register_agent(
            net.connect(), registration,
            std::make_shared<client::ScriptedModel>(
                std::vector<client::ModelReply>{}),
            std::move(options), done);
      });
  REQUIRE_MESSAGE(agent.has_value(), agent.error().message);
  return *agent;
}

// Resolves on the client's strand, as the default handler does.
std::shared_ptr<const client::ViewPolicy> resolve(
    client::AgentClient& agent, const client::ChannelMetadata& metadata) {
  auto view =
      client::wait<std::shared_ptr<const client::ViewPolicy>>([&](auto done) {
        boost::asio::post(
            agent.hub_client()->executor(), [&agent, metadata, done] {
              auto resolved = client::resolve_view_policy(agent, metadata);
              if (!resolved) return done(std::unexpected(resolved.error()));
              done(*resolved);
            });
      });
  REQUIRE_MESSAGE(view.has_value(), view.error().message);
  return *view;
}

}  // namespace
}  // namespace parley::testing

using namespace parley::testing;
namespace client = parley::client;
namespace engine = parley::engine;
using Kind = parley::client::ModelItem::Kind;

TEST_SUITE("client") {
  TEST_CASE(
      "FullTranscript shows every rendered envelope with its own as "
      "assistant") {
    auto custom = client::make_envelope("c1", "bob", "myapp.note", "{}");
    REQUIRE(custom.has_value());
    const std::vector<client::Envelope> log = {text("alice", "hi"), *custom,
                                               text("bob", "hello"),
                                               text("alice", "bye")};
    CHECK(kinds_and_texts(project(client::FullTranscript(), log, "bob")) ==
          std::vector<std::pair<Kind, std::string>>{{Kind::kUser, "hi"},
                                                    {Kind::kAssistant, "hello"},
                                                    {Kind::kUser, "bye"}});
  }

  TEST_CASE("WindowedSummary keeps the last recent_n behind a placeholder") {
    const std::vector<client::Envelope> log = {
        text("carol", "1"), text("alice", "2"), text("alice", "3"),
        text("bob", "4"), text("alice", "5")};
    auto window = client::WindowedSummary::create(2);
    REQUIRE(window.has_value());
    const auto items = project(**window, log, "bob");
    CHECK(kinds_and_texts(items) ==
          std::vector<std::pair<Kind, std::string>>{
              {Kind::kSummary,
               "Earlier in this channel: 3 messages from alice, carol."},
              {Kind::kAssistant, "4"},
              {Kind::kUser, "5"}});
    CHECK(items[0].event_count == 3);

    auto four = client::WindowedSummary::create(4);
    REQUIRE(four.has_value());
    CHECK(project(**four, log, "bob").front().text ==
          "Earlier in this channel: 1 message from carol.");
    // Within the window: the same as the full transcript.
    auto wide = client::WindowedSummary::create(5);
    REQUIRE(wide.has_value());
    CHECK(project(**wide, log, "bob") ==
          project(client::FullTranscript(), log, "bob"));
  }

  TEST_CASE("WindowedSummary refuses a window below 1") {
    auto none = client::WindowedSummary::create(0);
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code == client::code::kInvalid);
    CHECK(none.error().message == "recent_n must be >= 1, got 0");
  }

  TEST_CASE("views leave out envelopes addressed to others") {
    const std::vector<client::Envelope> log = {
        text("alice", "to all"),
        text("alice", "to bob only", std::vector<std::string>{"bob"}),
        text("carol", "to alice only", std::vector<std::string>{"alice"})};
    CHECK(kinds_and_texts(project(client::FullTranscript(), log, "bob")) ==
          std::vector<std::pair<Kind, std::string>>{
              {Kind::kUser, "to all"}, {Kind::kUser, "to bob only"}});
    // The sender sees its own, whatever the audience.
    CHECK(kinds_and_texts(project(client::FullTranscript(), log, "carol")) ==
          std::vector<std::pair<Kind, std::string>>{
              {Kind::kUser, "to all"}, {Kind::kAssistant, "to alice only"}});
    auto window = client::WindowedSummary::create(1);
    REQUIRE(window.has_value());
    CHECK(
        kinds_and_texts(project(**window, log, "carol")) ==
        std::vector<std::pair<Kind, std::string>>{
            {Kind::kSummary, "Earlier in this channel: 1 message from alice."},
            {Kind::kAssistant, "to alice only"}});
  }

  TEST_CASE("resolve_view_policy instantiates the manifest's default view") {
    InProcessNet net;
    auto agent = registered_agent(net);
    auto consulting = resolve(*agent, channel_of("consulting", {"bob"}));
    CHECK(consulting->name() == "full_transcript");
    auto conversation = resolve(*agent, channel_of("conversation", {"bob"}));
    CHECK(conversation->name() == "windowed_summary");
    const auto* windowed =
        dynamic_cast<const client::WindowedSummary*>(conversation.get());
    REQUIRE(windowed != nullptr);
    CHECK(windowed->policy().recent_n() == 10);
    auto discussion =
        resolve(*agent, channel_of("discussion", {"bob", "carol"}));
    CHECK(discussion->name() == "named_windowed_summary");
    const auto* named =
        dynamic_cast<const client::BuiltinView*>(discussion.get());
    REQUIRE(named != nullptr);
    CHECK(named->policy().recent_n() == 6);  // max(2 * 3, 4)
  }

  TEST_CASE("a custom view is resolved by the name its manifest gives") {
    InProcessNet net;
    client::AgentOptions options;
    options.views.add(
        "from_one_only", [](const client::ChannelMetadata& channel,
                            std::string_view, const engine::ChannelAdapter&) {
          return std::make_shared<const FromOneOnly>(channel.creator_id);
        });
    auto agent = registered_agent(net, options);
    auto metadata = channel_of("conversation", {"bob"});
    metadata.manifest.default_view_policy = "from_one_only";
    auto view = resolve(*agent, metadata);
    CHECK(view->name() == "from_one_only");
    const std::vector<client::Envelope> log = {text("alice", "mine"),
                                               text("bob", "not shown")};
    CHECK(kinds_and_texts(project(*view, log, "bob")) ==
          std::vector<std::pair<Kind, std::string>>{{Kind::kUser, "mine"}});

    metadata.manifest.default_view_policy = "nobody_registered_this";
    auto unknown =
        client::wait<std::shared_ptr<const client::ViewPolicy>>([&](auto done) {
          boost::asio::post(agent->hub_client()->executor(), [&, done] {
            auto resolved = client::resolve_view_policy(*agent, metadata);
            if (!resolved) return done(std::unexpected(resolved.error()));
            done(*resolved);
          });
        });
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().message ==
          "no view policy registered for 'nobody_registered_this'");
  }

  TEST_CASE("a per-channel view overrides the manifest's default") {
    InProcessNet net;
    auto agent = registered_agent(net);
    agent->set_view("c1", std::make_shared<const client::NamedTranscript>());
    CHECK(resolve(*agent, channel_of("consulting", {"bob"}))->name() ==
          "named_transcript");
    agent->set_view("c1", nullptr);
    CHECK(resolve(*agent, channel_of("consulting", {"bob"}))->name() ==
          "full_transcript");
  }

  TEST_CASE("the client's default view projects what parley view prints") {
    // The store the golden random-1 script leaves; every participant of
    // every channel, under the channel's default view.
    ScratchDir data;
    const auto store = data.path() / "store";
    {
      auto runner = engine::ScriptRunner::start(
          [&]() -> engine::Result<std::shared_ptr<parley::log::LogStore>> {
            auto opened = parley::log::open_rocksdb_log_store(store);
            REQUIRE(opened.has_value());
            return std::shared_ptr<parley::log::LogStore>(
                std::move(opened->store));
          });
      REQUIRE(runner.has_value());
      std::ifstream in(PARLEY_GOLDEN_DIR "/scripts/random-1.jsonl");
      for (std::string line; std::getline(in, line);) (*runner)->run_line(line);
    }
    auto opened = parley::log::open_rocksdb_log_store(store);
    REQUIRE(opened.has_value());
    engine::HubOptions options;
    options.store =
        std::shared_ptr<parley::log::LogStore>(std::move(opened->store));
    auto hub = engine::Hub::open(std::move(options));
    REQUIRE_MESSAGE(hub.has_value(), error_message(hub));
    struct Case {
      std::string channel, participant;
      std::vector<ModelItem> items;
    };
    std::vector<Case> cases;
    const client::ViewRegistry views = client::ViewRegistry::builtin();
    for (const auto& channel :
         (*hub)->list_channels(std::nullopt, std::nullopt, 1000)) {
      const auto adapter = builtin(channel.manifest.type);
      auto wal = (*hub)->read_wal(channel.channel_id);
      REQUIRE(wal.has_value());
      for (const auto& participant : channel.participants) {
        auto view = views.make(channel.manifest.default_view_policy, channel,
                               participant.agent_id, *adapter);
        REQUIRE(view != nullptr);
        auto names = [&](std::string_view id) { return (*hub)->name_for(id); };
        cases.push_back(
            {channel.channel_id, participant.agent_id,
             view->project(*wal, participant.agent_id, channel,
                           client::ViewContext::for_adapter(*adapter, names))});
      }
    }
    (void)(*hub)->close();
    REQUIRE_FALSE(cases.empty());
    std::size_t shown = 0;
    for (const Case& c : cases) {
      CAPTURE(c.channel);
      CAPTURE(c.participant);
      const auto run = run_command(
          std::string(PARLEY_BINARY) + " view --data " + store.string() + " " +
          c.channel + " --as " + c.participant + " -o jsonl");
      REQUIRE_MESSAGE(run.exit_code == 0, run.err);
      std::vector<nlohmann::json> printed;
      std::istringstream lines(run.out);
      for (std::string line; std::getline(lines, line);) {
        if (!line.empty()) printed.push_back(nlohmann::json::parse(line));
      }
      REQUIRE(printed.size() == c.items.size());
      for (std::size_t i = 0; i < printed.size(); ++i) {
        CHECK(printed[i]["text"] == c.items[i].text);
      }
      shown += printed.size();
    }
    MESSAGE(cases.size() << " views, " << shown << " items compared");
  }
}
