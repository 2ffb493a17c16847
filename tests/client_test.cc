// parley::client (engine/client/): HubClient and HumanClient. Every test
// body runs twice, once per link: in-process against an embedded Hub, and
// over a real loopback socket to `parley serve` (tests/client_networks.h).
#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/client/envelopes.h"
#include "engine/registry/skill.h"
#include "tests/client_networks.h"

namespace parley::testing {
namespace {

using client::Envelope;
using client::EnvelopeHandler;
using client::Finished;
using client::HubClient;
using client::HumanClient;
using client::HumanOptions;
using client::Passport;
using client::Registration;
using client::Result;
using client::wait;
namespace event_type = client::event_type;

Registration named(std::string name, std::optional<std::string> kind = {}) {
  Registration registration;
  registration.passport.name = std::move(name);
  registration.passport.kind = std::move(kind);
  return registration;
}

// A handler that records every envelope and finishes at once.
EnvelopeHandler recording(std::shared_ptr<Recorder> seen) {
  return [seen](const Envelope& envelope, Finished finished) {
    seen->add(envelope);
    finished(true, "");
  };
}

// A plain agent on its own connection, recording what it receives.
struct RecordingAgent {
  std::shared_ptr<HubClient> hub;
  Passport passport;
  std::shared_ptr<Recorder> seen = std::make_shared<Recorder>();
  const std::string& id() const { return *passport.agent_id; }
};

template <typename Net>
RecordingAgent recording_agent(Net& net, const std::string& name) {
  RecordingAgent agent;
  agent.hub = net.connect();
  auto passport = wait<Passport>([&](auto done) {
    agent.hub->register_agent(named(name), recording(agent.seen), done);
  });
  REQUIRE_MESSAGE(passport.has_value(), passport.error().message);
  agent.passport = *passport;
  return agent;
}

// A human on its own connection, recording what its callback receives.
struct RecordingHuman {
  std::shared_ptr<HumanClient> human;
  std::shared_ptr<Recorder> seen = std::make_shared<Recorder>();
  const std::string& id() const { return human->agent_id(); }
};

template <typename Net>
RecordingHuman recording_human(Net& net, const std::string& name,
                               HumanOptions options = {}) {
  RecordingHuman human;
  auto registered = wait<std::shared_ptr<HumanClient>>([&](auto done) {
    HumanClient::register_human(net.connect(), named(name), options, done);
  });
  REQUIRE_MESSAGE(registered.has_value(), registered.error().message);
  human.human = *registered;
  human.human->on_envelope(
      [seen = human.seen](const Envelope& envelope) { seen->add(envelope); });
  return human;
}

template <typename Net>
client::ChannelMetadata open_channel(RecordingAgent& creator,
                                     const std::string& invitee,
                                     const std::string& type) {
  client::CreateChannelRequest request;
  request.creator_id = creator.id();
  request.manifest_type = type;
  request.participants = {invitee};
  auto opened = wait<client::ChannelMetadata>(
      [&](auto done) { creator.hub->create_channel(request, done); });
  REQUIRE_MESSAGE(opened.has_value(), opened.error().message);
  return *opened;
}

std::string say(HubClient& hub, const std::string& channel,
                const std::string& sender, const std::string& text) {
  auto posted = wait<std::string>([&](auto done) {
    hub.post_envelope(client::text_envelope(channel, sender, text), done);
  });
  REQUIRE_MESSAGE(posted.has_value(), posted.error().message);
  return *posted;
}

}  // namespace
}  // namespace parley::testing

using namespace parley::testing;
using parley::client::Envelope;
using parley::client::HubClient;
using parley::client::HumanClient;
using parley::client::HumanOptions;
using parley::client::Passport;
using parley::client::Result;
using parley::client::wait;
namespace client = parley::client;
namespace engine = parley::engine;
namespace event_type = parley::client::event_type;

TYPE_TO_STRING(InProcessNet);
TYPE_TO_STRING(WsNet);

TEST_SUITE("client") {
  TEST_CASE_TEMPLATE(
      "registered and re-attached agents receive their envelopes", Net,
      InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    CHECK(alice.passport.name == "alice");
    CHECK(alice.passport.effective_kind() == "agent");

    // Client-side conventions, refused before anything is sent.
    auto human_as_agent = wait<Passport>([&](auto done) {
      alice.hub->register_agent(named("carol", "human"), nullptr, done);
    });
    REQUIRE_FALSE(human_as_agent.has_value());
    CHECK(human_as_agent.error().code == client::code::kInvalid);
    CHECK(human_as_agent.error().message ==
          "register() does not accept kind='human'; use register_human()");
    auto agent_as_human = wait<Passport>([&](auto done) {
      alice.hub->register_human(named("carol", "agent"), nullptr, done);
    });
    REQUIRE_FALSE(agent_as_human.has_value());
    CHECK(agent_as_human.error().message ==
          "register_human() requires kind='human' (or None); got 'agent'");

    RecordingHuman bob = recording_human(net, "bob");
    CHECK(bob.human->passport().kind == "human");

    // A second connection re-attaches alice by name (hello); from then on it
    // acts for her and receives her envelopes.
    auto again = net.connect();
    auto seen_again = std::make_shared<Recorder>();
    auto attached = wait<Passport>([&](auto done) {
      again->attach("alice", {}, recording(seen_again), done);
    });
    REQUIRE_MESSAGE(attached.has_value(), attached.error().message);
    CHECK(attached->agent_id == alice.passport.agent_id);

    RecordingAgent alice_again{again, *attached, seen_again};
    auto channel = open_channel<Net>(alice_again, bob.id(), "conversation");
    auto sent = wait<std::string>([&](auto done) {
      bob.human->send(channel.channel_id, "hi alice", done);
    });
    REQUIRE(sent.has_value());
    REQUIRE(seen_again->wait_until([&](const auto& seen) {
      return std::ranges::any_of(
          seen, [&](const Envelope& e) { return e.envelope_id == *sent; });
    }));
    CHECK(seen_again->texts() == std::vector<std::string>{"hi alice"});
    CHECK(alice.seen->texts().empty());  // the binding moved to `again`
  }

  TEST_CASE_TEMPLATE(
      "an agent re-attaches only with the credential it registered", Net,
      InProcessNet, WsNet) {
    Net net;
    engine::AuthInfo key;
    key.scheme = "api_key";
    key.claim = R"({"token":"secret"})";
    auto first = net.connect();
    auto registration = named(kKeyedAgent);
    registration.passport.auth = key;
    auto seen = std::make_shared<Recorder>();
    auto keyed = wait<Passport>([&](auto done) {
      first->register_agent(registration, recording(seen), done);
    });
    REQUIRE_MESSAGE(keyed.has_value(), keyed.error().message);

    auto second = net.connect();
    engine::AuthInfo wrong = key;
    wrong.claim = R"({"token":"guess"})";
    auto refused = wait<Passport>([&](auto done) {
      second->attach(kKeyedAgent, wrong, recording(seen), done);
    });
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == client::code::kAuthFailed);
    CHECK(refused.error().message == "api_key mismatch for 'keyed'");
    auto attached = wait<Passport>([&](auto done) {
      second->attach(kKeyedAgent, key, recording(seen), done);
    });
    REQUIRE_MESSAGE(attached.has_value(), attached.error().message);

    // A reconnect re-attaches with the same credential: the agent still acts
    // (over the wire only an agent bound to the connection may open).
    second->disconnect();
    auto back = wait<void>([&](auto done) { second->reconnect(done); });
    REQUIRE_MESSAGE(back.has_value(), back.error().message);
    RecordingHuman bob = recording_human(net, "bob");
    RecordingAgent agent{second, *attached, seen};
    auto channel = open_channel<Net>(agent, bob.id(), "conversation");
    CHECK(channel.state == engine::ChannelState::kActive);
  }

  TEST_CASE_TEMPLATE(
      "a consulting channel between an agent and a human completes in order",
      Net, InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    RecordingHuman reviewer = recording_human(net, "reviewer");
    // The human answers any text (pull side) with "approved".
    std::atomic<bool> answered = false;
    auto human = reviewer.human;
    human->next_envelope(
        [](const Envelope& e) { return e.event_type == event_type::kText; },
        std::nullopt,
        [human, &answered](Result<Envelope> question) {
          REQUIRE(question.has_value());
          human->send(
              question->channel_id, "approved",
              [&answered](Result<std::string> sent) {
                answered = sent.has_value();
              },
              std::nullopt, question->envelope_id);
        });

    // Opening returns once the human's client auto-acked the invite.
    auto channel = open_channel<Net>(alice, reviewer.id(), "consulting");
    CHECK(channel.state == engine::ChannelState::kActive);
    const std::string question = say(*alice.hub, channel.channel_id, alice.id(),
                                     "Please review payout #42");

    REQUIRE(alice.seen->wait_for_type(event_type::kChannelClosed));
    CHECK(eventually([&] { return answered.load(); }));
    CHECK(alice.seen->types() ==
          std::vector<std::string>{std::string(event_type::kChannelOpened),
                                   std::string(event_type::kText),
                                   std::string(event_type::kChannelClosed)});
    const auto alice_saw = alice.seen->all();
    CHECK(client::text_of(alice_saw[1]) == "approved");
    CHECK(alice_saw[1].causation_id == question);
    CHECK(client::event_data_json(alice_saw[2]).find("consulting_complete") !=
          std::string::npos);

    REQUIRE(reviewer.seen->wait_for_type(event_type::kChannelClosed));
    CHECK(reviewer.seen->types() ==
          std::vector<std::string>{std::string(event_type::kChannelInvite),
                                   std::string(event_type::kChannelOpened),
                                   std::string(event_type::kText),
                                   std::string(event_type::kChannelClosed)});
    CHECK(reviewer.seen->texts() ==
          std::vector<std::string>{"Please review payout #42"});

    // The hub's log holds the handshake and both messages, in order.
    auto wal = net.hub().read_wal(channel.channel_id);
    REQUIRE(wal.has_value());
    std::vector<std::string> types;
    for (const auto& e : *wal) types.push_back(e.event_type);
    CHECK(types ==
          std::vector<std::string>{std::string(event_type::kChannelInvite),
                                   std::string(event_type::kChannelInviteAck),
                                   std::string(event_type::kChannelOpened),
                                   std::string(event_type::kText),
                                   std::string(event_type::kText),
                                   std::string(event_type::kChannelClosed)});
  }

  TEST_CASE_TEMPLATE("a reconnect replays what was missed and nothing twice",
                     Net, InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    RecordingHuman bob = recording_human(net, "bob");
    auto channel = open_channel<Net>(alice, bob.id(), "conversation");
    const std::string& id = channel.channel_id;

    const std::string first = say(*alice.hub, id, alice.id(), "t0");
    REQUIRE(bob.seen->wait_until(
        [](const auto& seen) { return seen.size() == 3; }));  // invite, opened
    // Its receipt moved bob's cursor.
    REQUIRE(eventually(
        [&] { return net.hub().inbox_cursor(bob.id(), id) == first; }));

    bob.human->hub_client().disconnect();
    say(*alice.hub, id, alice.id(), "t1");
    say(*alice.hub, id, alice.id(), "t2");
    say(*alice.hub, id, alice.id(), "t3");
    auto back =
        wait<void>([&](auto done) { bob.human->hub_client().reconnect(done); });
    REQUIRE_MESSAGE(back.has_value(), back.error().message);
    const std::string live = say(*alice.hub, id, alice.id(), "t4");

    REQUIRE(bob.seen->wait_until([](const auto& seen) {
      return std::ranges::count_if(seen, [](const Envelope& e) {
               return client::text_of(e) == "t4";
             }) == 1;
    }));
    REQUIRE(eventually(
        [&] { return net.hub().inbox_cursor(bob.id(), id) == live; }));
    CHECK(bob.seen->texts() ==
          std::vector<std::string>{"t0", "t1", "t2", "t3", "t4"});
  }

  TEST_CASE_TEMPLATE(
      "reconnects while the other side keeps posting see every envelope "
      "once, in order",
      Net, InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    RecordingHuman bob = recording_human(net, "bob");
    auto channel = open_channel<Net>(alice, bob.id(), "conversation");
    const std::string& id = channel.channel_id;

    std::atomic<bool> stop = false;
    std::atomic<int> posted = 0;
    std::jthread poster([&] {
      for (int n = 0; !stop; ++n) {
        say(*alice.hub, id, alice.id(), std::to_string(n));
        posted = n + 1;
      }
    });
    struct StopPoster {
      std::atomic<bool>& stop;
      ~StopPoster() { stop = true; }
    } stop_poster{stop};  // before poster joins, even when a REQUIRE throws
    // Each reconnect's replay races alice's live posts.
    for (int reconnect = 0; reconnect < 10; ++reconnect) {
      const int before = posted;
      REQUIRE(eventually([&] { return posted > before + 5; }));
      bob.human->hub_client().disconnect();
      auto back = wait<void>(
          [&](auto done) { bob.human->hub_client().reconnect(done); });
      REQUIRE_MESSAGE(back.has_value(), back.error().message);
    }
    stop = true;
    poster.join();
    const std::string last = std::to_string(posted - 1);
    REQUIRE(bob.seen->wait_until([&](const auto& seen) {
      return !seen.empty() && client::text_of(seen.back()) == last;
    }));
    std::string seen;
    std::string expected;
    for (const std::string& text : bob.seen->texts()) seen += text + " ";
    for (int n = 0; n < posted; ++n) expected += std::to_string(n) + " ";
    CHECK(seen == expected);
  }

  TEST_CASE_TEMPLATE(
      "a new client attaching replays only what the agent has not acked", Net,
      InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    RecordingHuman bob = recording_human(net, "bob");
    auto channel = open_channel<Net>(alice, bob.id(), "conversation");
    const std::string& id = channel.channel_id;
    const std::string acked = say(*alice.hub, id, alice.id(), "seen");
    REQUIRE(eventually(
        [&] { return net.hub().inbox_cursor(bob.id(), id) == acked; }));

    // bob's process goes away; alice keeps talking.
    bob.human->hub_client().close();
    bob.human.reset();
    say(*alice.hub, id, alice.id(), "missed 1");
    say(*alice.hub, id, alice.id(), "missed 2");

    auto seen = std::make_shared<Recorder>();
    auto attached = wait<std::shared_ptr<HumanClient>>([&](auto done) {
      HumanClient::attach(net.connect(), "bob", {}, {}, done);
    });
    REQUIRE_MESSAGE(attached.has_value(), attached.error().message);
    // The replay follows the hello: the pull side has it in log order.
    std::vector<std::string> texts;
    for (int i = 0; i < 2; ++i) {
      auto next = wait<Envelope>(
          [&](auto done) { (*attached)->next_envelope(nullptr, 5s, done); });
      REQUIRE_MESSAGE(next.has_value(), next.error().message);
      texts.push_back(client::text_of(*next));
    }
    CHECK(texts == std::vector<std::string>{"missed 1", "missed 2"});
    auto nothing_more = wait<Envelope>(
        [&](auto done) { (*attached)->next_envelope(nullptr, 300ms, done); });
    REQUIRE_FALSE(nothing_more.has_value());
    CHECK(nothing_more.error().code == client::code::kTimeout);
  }

  TEST_CASE_TEMPLATE("a call that outlives its timeout fails with timeout", Net,
                     InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    // A human who gates joins by hand: create_channel waits for its ack.
    RecordingHuman bob =
        recording_human(net, "bob", HumanOptions{.auto_ack_invites = false});
    client::CreateChannelRequest request;
    request.creator_id = alice.id();
    request.manifest_type = "conversation";
    request.participants = {bob.id()};
    const auto started = std::chrono::steady_clock::now();
    auto opened = wait<client::ChannelMetadata>(
        [&](auto done) { alice.hub->create_channel(request, done, 300ms); });
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code == client::code::kTimeout);
    CHECK(opened.error().message ==
          "no answer to 'create_channel' within 300 ms");
    CHECK_FALSE(opened.error().from_hub());
    CHECK(std::chrono::steady_clock::now() - started < 5s);

    // The hub still carries the call out: bob's own ack activates the channel,
    // and the late answer is dropped.
    REQUIRE(bob.seen->wait_for_type(event_type::kChannelInvite));
    const Envelope invite = bob.seen->all().front();
    auto acked = wait<std::string>([&](auto done) {
      bob.human->post_envelope(client::invite_ack(invite, ""), done);
    });
    REQUIRE_MESSAGE(acked.has_value(), acked.error().message);
    REQUIRE(bob.seen->wait_for_type(event_type::kChannelOpened));
  }

  TEST_CASE_TEMPLATE(
      "a skill is registered then read then replaced and deleted", Net,
      InProcessNet, WsNet) {
    Net net;
    auto hub = net.connect();
    Registration writer = named("writer");
    writer.skill_md = "---\nname: writer\ndescription: drafts\n---\nI draft.\n";
    auto passport = wait<Passport>(
        [&](auto done) { hub->register_agent(writer, nullptr, done); });
    REQUIRE_MESSAGE(passport.has_value(), passport.error().message);
    const std::string id = *passport->agent_id;
    auto skill_of = [&] {
      auto skill = wait<std::optional<std::string>>(
          [&](auto done) { hub->get_skill(id, done); });
      REQUIRE_MESSAGE(skill.has_value(), skill.error().message);
      return *skill;
    };
    const auto registered = skill_of();
    REQUIRE(registered.has_value());
    const engine::SkillDocument document =
        engine::parse_skill_frontmatter(*registered);
    CHECK(document.frontmatter ==
          std::vector<std::pair<std::string, std::string>>{
              {"name", "writer"}, {"description", "drafts"}});
    CHECK(document.body == "I draft.\n");

    auto set = [&](std::optional<std::string> text) {
      auto done_setting =
          wait<void>([&](auto done) { hub->set_skill(id, text, done); });
      REQUIRE_MESSAGE(done_setting.has_value(), done_setting.error().message);
    };
    set("I draft and edit.\n");
    CHECK(skill_of() == "I draft and edit.\n");
    set(std::nullopt);
    CHECK(skill_of() == std::nullopt);
    CHECK(net.hub().get_skill(id) == std::nullopt);
  }

  TEST_CASE_TEMPLATE("a hub error reaches the caller with its code and message",
                     Net, InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    auto other = net.connect();
    auto duplicate = wait<Passport>([&](auto done) {
      other->register_agent(named("alice"), nullptr, done);
    });
    REQUIRE_FALSE(duplicate.has_value());
    CHECK(duplicate.error().from_hub());
    CHECK(duplicate.error().code == client::code::kProtocol);
    CHECK(duplicate.error().message ==
          "name 'alice' already registered (agent_id=" + alice.id() +
              "); unregister it before re-registering.");

    auto unknown =
        wait<Passport>([&](auto done) { other->get_agent("nobody", done); });
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().code == client::code::kNotFound);
    const auto expected = net.hub().get_agent("nobody");
    REQUIRE_FALSE(expected.has_value());
    CHECK(unknown.error().message == expected.error().message);
  }

  TEST_CASE_TEMPLATE("a throwing callback neither stops delivery nor the ack",
                     Net, InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    RecordingHuman bob = recording_human(net, "bob");  // records first
    std::atomic<int> thrown = 0;
    bob.human->on_envelope([&thrown](const Envelope&) {
      ++thrown;
      throw std::runtime_error("a buggy UI callback");
    });
    auto after = std::make_shared<Recorder>();
    bob.human->on_envelope([after](const Envelope& e) { after->add(e); });

    auto channel = open_channel<Net>(alice, bob.id(), "conversation");
    say(*alice.hub, channel.channel_id, alice.id(), "one");
    const std::string last =
        say(*alice.hub, channel.channel_id, alice.id(), "two");

    REQUIRE(
        after->wait_until([](const auto& seen) { return seen.size() == 4; }));
    CHECK(after->texts() == std::vector<std::string>{"one", "two"});
    CHECK(bob.seen->texts() == std::vector<std::string>{"one", "two"});
    CHECK(thrown == 4);
    // The pull side got them too, and every receipt was still sent.
    auto first = wait<Envelope>([&](auto done) {
      bob.human->next_envelope(
          [](const Envelope& e) { return e.event_type == event_type::kText; },
          1s, done);
    });
    REQUIRE(first.has_value());
    CHECK(client::text_of(*first) == "one");
    CHECK(eventually([&] {
      return net.hub().inbox_cursor(bob.id(), channel.channel_id) == last;
    }));
  }

  TEST_CASE_TEMPLATE("next_envelope discards what its predicate refuses", Net,
                     InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    RecordingHuman bob = recording_human(net, "bob");
    auto channel = open_channel<Net>(alice, bob.id(), "conversation");
    say(*alice.hub, channel.channel_id, alice.id(), "skip me");
    say(*alice.hub, channel.channel_id, alice.id(), "take me");
    say(*alice.hub, channel.channel_id, alice.id(), "after");
    REQUIRE(bob.seen->wait_until([](const auto& seen) {
      return seen.size() == 5;  // invite, opened, three texts
    }));

    auto taken = wait<Envelope>([&](auto done) {
      bob.human->next_envelope(
          [](const Envelope& e) { return client::text_of(e) == "take me"; }, 1s,
          done);
    });
    REQUIRE(taken.has_value());
    CHECK(client::text_of(*taken) == "take me");
    // Everything before it was discarded; what came after is still queued.
    auto next = wait<Envelope>(
        [&](auto done) { bob.human->next_envelope(nullptr, 1s, done); });
    REQUIRE(next.has_value());
    CHECK(client::text_of(*next) == "after");
    auto none = wait<Envelope>(
        [&](auto done) { bob.human->next_envelope(nullptr, 200ms, done); });
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().code == client::code::kTimeout);
    CHECK(none.error().message == "no matching envelope within 200 ms");
  }

  TEST_CASE_TEMPLATE(
      "for_each_envelope streams every envelope in order until disconnect", Net,
      InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    RecordingHuman bob = recording_human(net, "bob");
    auto streamed = std::make_shared<Recorder>();
    auto ended = std::make_shared<std::promise<Result<void>>>();
    bob.human->for_each_envelope(
        [streamed](const Envelope& envelope, std::function<void()> next) {
          streamed->add(envelope);
          next();
        },
        [ended](Result<void> end) { ended->set_value(end); });
    auto channel = open_channel<Net>(alice, bob.id(), "conversation");
    for (const char* text : {"one", "two", "three"}) {
      say(*alice.hub, channel.channel_id, alice.id(), text);
    }
    REQUIRE(streamed->wait_until(
        [](const auto& seen) { return seen.size() == 5; }));
    CHECK(streamed->types() ==
          std::vector<std::string>{"ag2.channel.invite", "ag2.channel.opened",
                                   "ag2.msg.text", "ag2.msg.text",
                                   "ag2.msg.text"});
    CHECK(streamed->texts() == std::vector<std::string>{"one", "two", "three"});
    bob.human->disconnect();
    auto end = ended->get_future();
    REQUIRE(end.wait_for(10s) == std::future_status::ready);
    CHECK(end.get().has_value());
  }

  TEST_CASE_TEMPLATE("a removed callback is not called again", Net,
                     InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    RecordingHuman bob = recording_human(net, "bob");
    auto removed = std::make_shared<Recorder>();
    const auto id = bob.human->on_envelope(
        [removed](const Envelope& e) { removed->add(e); });
    auto channel = open_channel<Net>(alice, bob.id(), "conversation");
    say(*alice.hub, channel.channel_id, alice.id(), "one");
    REQUIRE(
        removed->wait_until([](const auto& seen) { return seen.size() == 3; }));

    bob.human->remove_envelope_callback(id);
    say(*alice.hub, channel.channel_id, alice.id(), "two");
    REQUIRE(bob.seen->wait_until(
        [](const auto& seen) { return seen.size() == 4; }));
    CHECK(removed->texts() == std::vector<std::string>{"one"});
  }

  TEST_CASE_TEMPLATE(
      "an unregistered agent is forgotten by the hub and by its client", Net,
      InProcessNet, WsNet) {
    Net net;
    auto log = std::make_shared<Recorder>();
    client::HubClientOptions options;
    auto lines = std::make_shared<std::vector<std::string>>();
    auto lines_mutex = std::make_shared<std::mutex>();
    options.log = [lines, lines_mutex](std::string_view line) {
      std::lock_guard lock(*lines_mutex);
      lines->emplace_back(line);
    };
    auto hub = net.connect(options);
    auto temp = wait<Passport>([&](auto done) {
      hub->register_agent(named("temp"), recording(log), done);
    });
    REQUIRE_MESSAGE(temp.has_value(), temp.error().message);
    auto gone =
        wait<void>([&](auto done) { hub->unregister(*temp->agent_id, done); });
    REQUIRE_MESSAGE(gone.has_value(), gone.error().message);
    auto looked_up =
        wait<Passport>([&](auto done) { hub->get_agent("temp", done); });
    REQUIRE_FALSE(looked_up.has_value());
    CHECK(looked_up.error().code == client::code::kNotFound);

    // A reconnect re-attaches nobody: no hello for the agent that is gone.
    hub->disconnect();
    auto back = wait<void>([&](auto done) { hub->reconnect(done); });
    REQUIRE_MESSAGE(back.has_value(), back.error().message);
    std::lock_guard lock(*lines_mutex);
    CHECK_MESSAGE(lines->empty(),
                  (lines->empty() ? std::string() : lines->front()));
  }

  TEST_CASE_TEMPLATE("calls made while disconnected wait for the reconnect",
                     Net, InProcessNet, WsNet) {
    Net net;
    RecordingAgent alice = recording_agent(net, "alice");
    alice.hub->disconnect();
    auto answer = std::make_shared<std::promise<Result<Passport>>>();
    alice.hub->get_agent("alice", [answer](Result<Passport> passport) {
      answer->set_value(std::move(passport));
    });
    auto pending = answer->get_future();
    CHECK(pending.wait_for(200ms) == std::future_status::timeout);

    auto back = wait<void>([&](auto done) { alice.hub->reconnect(done); });
    REQUIRE_MESSAGE(back.has_value(), back.error().message);
    REQUIRE(pending.wait_for(5s) == std::future_status::ready);
    auto passport = pending.get();
    REQUIRE(passport.has_value());
    CHECK(passport->agent_id == alice.passport.agent_id);

    // After close(), a call fails at once.
    alice.hub->close();
    auto closed =
        wait<Passport>([&](auto done) { alice.hub->get_agent("alice", done); });
    REQUIRE_FALSE(closed.has_value());
    CHECK(closed.error().code == client::code::kClosed);
  }

  TEST_CASE(
      "wss:// reaches a hub whose certificate a trusted CA signed for its "
      "address but not an untrusted one nor with a plain ws:// client or "
      "an unreadable CA file") {
    parley::testing::ScratchDir certs;
    // Not bindings: lambdas capture them, which clang 14 cannot.
    const auto certificate = self_signed_certificate(certs.path());
    const auto& cert = certificate.cert;
    const auto& key = certificate.key;
    ServeFixture serve([&](parley::transport::ServerConfig& config) {
      config.tls_cert = cert;
      config.tls_key = key;
    });
    const std::string port = std::to_string(serve.port());
    client::IoThread io;
    auto connect = [&](const std::string& url,
                       std::optional<std::filesystem::path> ca) {
      return wait<std::shared_ptr<HubClient>>([&](auto done) {
        HubClient::connect(io.executor(), url, {.tls_ca_file = ca}, done);
      });
    };

    auto trusted = connect("wss://127.0.0.1:" + port, cert);
    REQUIRE_MESSAGE(trusted.has_value(), trusted.error().message);
    auto passport = wait<Passport>([&](auto done) {
      (*trusted)->register_agent(named("alice"), nullptr, done);
    });
    REQUIRE_MESSAGE(passport.has_value(), passport.error().message);
    CHECK(passport->name == "alice");
    client::close_and_wait(**trusted);

    auto untrusted = connect("wss://127.0.0.1:" + port, std::nullopt);
    REQUIRE_FALSE(untrusted.has_value());
    CHECK(untrusted.error().code == client::code::kDisconnected);
    CHECK_MESSAGE(
        untrusted.error().message.find("TLS handshake") != std::string::npos,
        untrusted.error().message);
    auto plain = connect("ws://127.0.0.1:" + port, std::nullopt);
    REQUIRE_FALSE(plain.has_value());
    CHECK(plain.error().code == client::code::kDisconnected);
    auto no_file =
        connect("wss://127.0.0.1:" + port, certs.path() / "missing.pem");
    REQUIRE_FALSE(no_file.has_value());
    CHECK(no_file.error().code == client::code::kInvalid);
    CHECK(no_file.error().message.starts_with(
        "cannot load the CAs to trust for TLS from "));
  }

  TEST_CASE("a bad or unreachable hub URL fails to connect") {
    client::IoThread io;
    auto connect = [&](const std::string& url) {
      return wait<std::shared_ptr<HubClient>>(
          [&](auto done) { HubClient::connect(io.executor(), url, {}, done); });
    };
    auto no_scheme = connect("http://127.0.0.1:1");
    REQUIRE_FALSE(no_scheme.has_value());
    CHECK(no_scheme.error().code == client::code::kInvalid);
    CHECK(no_scheme.error().message ==
          "a hub URL must start with ws:// or wss://, got "
          "'http://127.0.0.1:1'");
    auto no_port = connect("ws://127.0.0.1");
    REQUIRE_FALSE(no_port.has_value());
    CHECK(no_port.error().code == client::code::kInvalid);
    auto bad_port = connect("ws://127.0.0.1:99999");
    REQUIRE_FALSE(bad_port.has_value());
    CHECK(bad_port.error().message ==
          "bad port in hub URL 'ws://127.0.0.1:99999'");

    // Nothing listens on a port a stopped server just released.
    std::uint16_t port = 0;
    {
      ServeFixture serve;
      port = serve.port();
    }
    auto refused = connect("ws://127.0.0.1:" + std::to_string(port));
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == client::code::kDisconnected);
    CHECK(refused.error().message.starts_with(
        "cannot connect to ws://127.0.0.1:" + std::to_string(port) + "/"));
  }

  TEST_CASE("a restarted server is reconnected to and its replay resumes") {
    WsNet net;
    RecordingAgent alice = recording_agent(net, "alice");
    RecordingHuman bob = recording_human(net, "bob");
    auto channel = open_channel<WsNet>(alice, bob.id(), "conversation");
    const std::string& id = channel.channel_id;
    const std::string acked = say(*alice.hub, id, alice.id(), "before");
    REQUIRE(eventually(
        [&] { return net.hub().inbox_cursor(bob.id(), id) == acked; }));

    // Both connections drop; each client re-opens and re-attaches by itself.
    net.restart_server();
    // alice's call waits for her reconnect, then goes through.
    say(*alice.hub, id, alice.id(), "after 1");
    const std::string last = say(*alice.hub, id, alice.id(), "after 2");

    REQUIRE(bob.seen->wait_until([](const auto& seen) {
      return std::ranges::any_of(seen, [](const Envelope& e) {
        return client::text_of(e) == "after 2";
      });
    }));
    REQUIRE(eventually(
        [&] { return net.hub().inbox_cursor(bob.id(), id) == last; }));
    CHECK(bob.seen->texts() ==
          std::vector<std::string>{"before", "after 1", "after 2"});
  }

}  // TEST_SUITE
