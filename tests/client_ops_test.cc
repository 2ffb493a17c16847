// parley::client's typed control-plane calls (HubClient): each reads what
// the hub holds, or writes what the hub then holds, over both links, an
// embedded hub and a real `parley serve` on loopback
// (tests/client_networks.h).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/client/envelopes.h"
#include "engine/client/human_client.h"
#include "engine/json/records_json.h"
#include "engine/json/task_json.h"
#include "tests/client_networks.h"

namespace parley::testing {
namespace {

using client::ChannelMetadata;
using client::Envelope;
using client::HubClient;
using client::Passport;
using client::Registration;
using client::wait;
using nlohmann::json;
namespace code = client::code;

// An agent on its own connection whose handler finishes every envelope.
struct Member {
  std::shared_ptr<HubClient> hub;
  std::string id;
};

template <typename Net>
Member join(Net& net, Registration registration) {
  Member member{.hub = net.connect()};
  auto passport = wait<Passport>([&](auto done) {
    member.hub->register_agent(
        std::move(registration),
        [](const Envelope&, client::Finished finished) { finished(true, ""); },
        done);
  });
  REQUIRE_MESSAGE(passport.has_value(), passport.error().message);
  member.id = *passport->agent_id;
  return member;
}

template <typename Net>
Member join(Net& net, std::string name, std::string summary = "") {
  Registration registration;
  registration.passport.name = std::move(name);
  registration.resume.summary = std::move(summary);
  return join(net, std::move(registration));
}

// A human (auto-acking invites) on its own connection.
template <typename Net>
std::shared_ptr<client::HumanClient> human(Net& net, std::string name) {
  Registration registration;
  registration.passport.name = std::move(name);
  auto registered = wait<std::shared_ptr<client::HumanClient>>([&](auto done) {
    client::HumanClient::register_human(net.connect(), registration, {}, done);
  });
  REQUIRE_MESSAGE(registered.has_value(), registered.error().message);
  return *registered;
}

std::vector<std::string> names_of(const std::vector<Passport>& passports) {
  std::vector<std::string> names;
  for (const Passport& passport : passports) names.push_back(passport.name);
  return names;
}

template <typename T>
void require_ok(const client::Result<T>& result) {
  REQUIRE_MESSAGE(result.has_value(), result.error().message);
}

}  // namespace
}  // namespace parley::testing

using namespace parley::testing;
using parley::client::Passport;
using parley::client::wait;
namespace client = parley::client;
namespace engine = parley::engine;

TYPE_TO_STRING(InProcessNet);
TYPE_TO_STRING(WsNet);

TEST_SUITE("client") {
  TEST_CASE_TEMPLATE("typed agent calls read and write the registry", Net,
                     InProcessNet, WsNet) {
    Net net;
    Member alice = join(net, "alice", "Reviews payouts");
    Member bob = join(net, "bob", "Writes reports");
    auto carol = human(net, "carol");

    auto found = wait<std::optional<std::string>>(
        [&](auto done) { bob.hub->find_agent_id("alice", done); });
    require_ok(found);
    CHECK(*found == alice.id);
    auto missing = wait<std::optional<std::string>>(
        [&](auto done) { bob.hub->find_agent_id("nobody", done); });
    require_ok(missing);
    CHECK_FALSE(missing->has_value());

    auto everyone = wait<std::vector<Passport>>(
        [&](auto done) { bob.hub->list_agents({.sort_by = "name"}, done); });
    require_ok(everyone);
    CHECK(names_of(*everyone) ==
          std::vector<std::string>{"alice", "bob", "carol"});
    auto humans = wait<std::vector<Passport>>(
        [&](auto done) { bob.hub->list_agents({.kind = "human"}, done); });
    require_ok(humans);
    CHECK(names_of(*humans) == std::vector<std::string>{"carol"});
    auto by_summary = wait<std::vector<Passport>>(
        [&](auto done) { bob.hub->list_agents({.query = "PAYOUT"}, done); });
    require_ok(by_summary);
    CHECK(names_of(*by_summary) == std::vector<std::string>{"alice"});
    auto limited = wait<std::vector<Passport>>(
        [&](auto done) { bob.hub->list_agents({.limit = 1}, done); });
    require_ok(limited);
    CHECK(limited->size() == 1);

    // The resume: read, replaced by its owner, and added to by an
    // observation.
    auto resume = wait<client::Resume>(
        [&](auto done) { bob.hub->get_resume(alice.id, done); });
    require_ok(resume);
    CHECK(resume->summary == "Reviews payouts");
    client::Resume replaced = *resume;
    replaced.summary = "Reviews payouts and refunds";
    replaced.claimed_capabilities = {"review"};
    require_ok(wait<void>(
        [&](auto done) { alice.hub->set_resume(alice.id, replaced, done); }));
    require_ok(wait<void>([&](auto done) {
      alice.hub->record_observation({.owner_id = alice.id,
                                     .capability = "review",
                                     .outcome = "completed",
                                     .latency_ms = 12.5},
                                    done);
    }));
    auto reread = wait<client::Resume>(
        [&](auto done) { bob.hub->get_resume(alice.id, done); });
    require_ok(reread);
    CHECK(reread->summary == "Reviews payouts and refunds");
    CHECK(reread->claimed_capabilities == std::vector<std::string>{"review"});
    REQUIRE(reread->observed.contains("review"));
    CHECK(reread->observed.at("review").n == 1);
    CHECK(reread->observed.at("review").completed == 1);
    const auto held = net.hub().get_resume(alice.id);
    REQUIRE(held.has_value());
    CHECK(engine::to_json(*reread) == engine::to_json(*held));

    // The rule, read and replaced.
    auto rule = wait<client::Rule>(
        [&](auto done) { alice.hub->get_rule(alice.id, done); });
    require_ok(rule);
    CHECK(rule->limits.inbox_max_pending == 1000);
    client::Rule stricter = *rule;
    ++stricter.version;  // the hub's stamp on a replaced rule
    stricter.limits.inbox_max_pending = 7;
    stricter.access.accept_types = {"consulting"};
    require_ok(wait<void>(
        [&](auto done) { alice.hub->set_rule(alice.id, stricter, done); }));
    auto reread_rule = wait<client::Rule>(
        [&](auto done) { alice.hub->get_rule(alice.id, done); });
    require_ok(reread_rule);
    CHECK(engine::to_json(*reread_rule) == engine::to_json(stricter));
    const auto held_rule = net.hub().get_rule(alice.id);
    REQUIRE(held_rule.has_value());
    CHECK(engine::to_json(*held_rule) == engine::to_json(stricter));

    // The hub's refusals arrive as they are.
    auto unknown = wait<client::Resume>(
        [&](auto done) { bob.hub->get_resume("no-such-id", done); });
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().code == code::kNotFound);
    const auto expected = net.hub().get_resume("no-such-id");
    REQUIRE_FALSE(expected.has_value());
    CHECK(unknown.error().message == expected.error().message);
  }

  TEST_CASE_TEMPLATE("typed channel calls read what the channel holds", Net,
                     InProcessNet, WsNet) {
    Net net;
    Member alice = join(net, "alice");
    auto bob = human(net, "bob");

    client::CreateChannelRequest request{.creator_id = alice.id,
                                         .manifest_type = "consulting",
                                         .participants = {bob->agent_id()}};
    auto opened = wait<ChannelMetadata>(
        [&](auto done) { alice.hub->create_channel(request, done); });
    require_ok(opened);
    const std::string channel = opened->channel_id;
    auto question = wait<std::string>([&](auto done) {
      alice.hub->post_envelope(
          client::text_envelope(channel, alice.id, "How many payouts?"), done);
    });
    require_ok(question);

    auto listed = wait<std::vector<ChannelMetadata>>(
        [&](auto done) { alice.hub->list_channels(alice.id, done); });
    require_ok(listed);
    REQUIRE(listed->size() == 1);
    CHECK(listed->front().channel_id == channel);
    auto own = wait<std::vector<ChannelMetadata>>(
        [&](auto done) { alice.hub->list_channels(std::nullopt, done); });
    require_ok(own);
    CHECK(own->size() == 1);
    auto none = wait<std::vector<ChannelMetadata>>(
        [&](auto done) { alice.hub->list_channels(alice.id, done, 0); });
    require_ok(none);
    CHECK(none->empty());

    // read_wal's Python slices: invite, ack, opened, question.
    const auto types = [&](std::int64_t since,
                           std::optional<std::int64_t> until) {
      auto wal = wait<std::vector<Envelope>>(
          [&](auto done) { alice.hub->read_wal(channel, done, since, until); });
      REQUIRE_MESSAGE(wal.has_value(), wal.error().message);
      std::vector<std::string> out;
      for (const Envelope& envelope : *wal) out.push_back(envelope.event_type);
      return out;
    };
    namespace ev = client::event_type;
    CHECK(types(0, std::nullopt) ==
          std::vector<std::string>{std::string(ev::kChannelInvite),
                                   std::string(ev::kChannelInviteAck),
                                   std::string(ev::kChannelOpened),
                                   std::string(ev::kText)});
    CHECK(types(-1, std::nullopt) ==
          std::vector<std::string>{std::string(ev::kText)});
    CHECK(types(1, 3) ==
          std::vector<std::string>{std::string(ev::kChannelInviteAck),
                                   std::string(ev::kChannelOpened)});

    // Consulting: the question asked, it is the human's turn alone.
    auto alice_again = wait<bool>([&](auto done) {
      alice.hub->can_send(channel, alice.id, done, std::string(ev::kText));
    });
    require_ok(alice_again);
    CHECK(*alice_again == net.hub().can_send(channel, alice.id, ev::kText));
    auto bob_may = wait<bool>([&](auto done) {
      bob->hub_client().can_send(channel, bob->agent_id(), done);
    });
    require_ok(bob_may);
    CHECK(*bob_may);
    auto turns = wait<std::vector<engine::PendingTurn>>([&](auto done) {
      bob->hub_client().pending_turns_for(bob->agent_id(), done);
    });
    require_ok(turns);
    REQUIRE(turns->size() == 1);
    CHECK(turns->front().channel_id == channel);
    CHECK(turns->front().triggering_envelope_id == *question);
    const auto held = net.hub().pending_turns_for(bob->agent_id());
    REQUIRE(held.size() == 1);
    CHECK(turns->front().expected_at == held.front().expected_at);
    CHECK_FALSE(turns->front().expected_at.empty());
  }

  TEST_CASE_TEMPLATE("typed task calls observe update and checkpoint a task",
                     Net, InProcessNet, WsNet) {
    Net net;
    Member alice = join(net, "alice");

    engine::TaskMetadata task{
        .task_id = "task-1",
        .owner_id = alice.id,
        .spec = {.title = "Count payouts", .payload = R"({"month":"May"})"},
        .state = "running",
        .created_at = "2026-11-27T00:00:00+00:00"};
    require_ok(
        wait<void>([&](auto done) { alice.hub->observe_task(task, done); }));
    require_ok(wait<void>([&](auto done) {
      alice.hub->update_task("task-1", {.progress = R"({"done":3})"}, done);
    }));
    auto read = wait<engine::TaskMetadata>(
        [&](auto done) { alice.hub->get_task("task-1", done); });
    require_ok(read);
    CHECK(read->owner_id == alice.id);
    CHECK(read->spec.title == "Count payouts");
    CHECK(json::parse(read->progress) == json{{"done", 3}});
    const auto held = net.hub().get_task("task-1");
    REQUIRE(held.has_value());
    CHECK(engine::to_json(*read) == engine::to_json(*held));

    require_ok(wait<void>([&](auto done) {
      alice.hub->checkpoint_task("task-1", R"({"cursor":"p-17"})", done);
    }));
    auto checkpoint = wait<std::optional<std::string>>(
        [&](auto done) { alice.hub->read_task_checkpoint("task-1", done); });
    require_ok(checkpoint);
    REQUIRE(checkpoint->has_value());
    CHECK(json::parse(**checkpoint) == json{{"cursor", "p-17"}});

    require_ok(wait<void>([&](auto done) {
      alice.hub->update_task(
          "task-1", {.state = "completed", .result = R"({"count":42})"}, done);
    }));
    auto completed = wait<std::vector<engine::TaskMetadata>>([&](auto done) {
      alice.hub->list_tasks({.owner_id = alice.id, .state = "completed"}, done);
    });
    require_ok(completed);
    REQUIRE(completed->size() == 1);
    CHECK(json::parse(completed->front().result) == json{{"count", 42}});
    auto running = wait<std::vector<engine::TaskMetadata>>(
        [&](auto done) { alice.hub->list_tasks({.state = "running"}, done); });
    require_ok(running);
    CHECK(running->empty());

    // The mirror's failure report is a task event the hub accepts; a forged
    // terminal event is refused as the hub refuses it.
    require_ok(wait<void>([&](auto done) {
      alice.hub->fire_task_event(
          "task-1", "mirror_failed",
          json{{"op", "update_task"}, {"owner_id", alice.id}}.dump(), done);
    }));
    auto forged = wait<void>([&](auto done) {
      alice.hub->fire_task_event("task-1", "completed", "{}", done);
    });
    REQUIRE_FALSE(forged.has_value());
    CHECK(forged.error().code == code::kAccessDenied);
    CHECK(forged.error().message ==
          "only 'mirror_failed' task events are accepted over the wire, got "
          "'completed'");

    auto unknown = wait<engine::TaskMetadata>(
        [&](auto done) { alice.hub->get_task("task-2", done); });
    REQUIRE_FALSE(unknown.has_value());
    CHECK(unknown.error().from_hub());
    const auto expected = net.hub().get_task("task-2");
    REQUIRE_FALSE(expected.has_value());
    CHECK(unknown.error().message == expected.error().message);
  }

  TEST_CASE_TEMPLATE("JSON text that is not JSON fails before it is sent", Net,
                     InProcessNet, WsNet) {
    Net net;
    Member alice = join(net, "alice");
    auto checkpoint = wait<void>([&](auto done) {
      alice.hub->checkpoint_task("task-1", "{not json", done);
    });
    REQUIRE_FALSE(checkpoint.has_value());
    CHECK(checkpoint.error().code == code::kInvalid);
    CHECK_FALSE(checkpoint.error().from_hub());
    CHECK(checkpoint.error().message.starts_with("invalid JSON text: "));

    client::CreateChannelRequest request{.creator_id = alice.id,
                                         .manifest_type = "consulting",
                                         .participants = {alice.id},
                                         .knobs = "nope"};
    auto opened = wait<ChannelMetadata>(
        [&](auto done) { alice.hub->create_channel(request, done); });
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code == code::kInvalid);
    CHECK(net.hub().list_channels({}, {}).empty());
  }
}
