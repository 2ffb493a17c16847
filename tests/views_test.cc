// Views (VIEW-*, ENV-06): the projection of a channel's log into one
// participant's model history, the adapters' render_envelope and
// default_view_policy, and workflow packet text.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/adapters/consulting.h"
#include "engine/adapters/conversation.h"
#include "engine/adapters/discussion.h"
#include "engine/adapters/transition_graph.h"
#include "engine/adapters/workflow.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/views/view.h"
#include "tests/hub_fixture.h"

namespace parley::engine {

// Readable doctest failures.
std::ostream& operator<<(std::ostream& out, const ModelItem& item) {
  switch (item.kind) {
    case ModelItem::Kind::kUser:
      return out << "user(\"" << item.text << "\")";
    case ModelItem::Kind::kAssistant:
      return out << "assistant(\"" << item.text << "\")";
    case ModelItem::Kind::kSummary:
      return out << "summary(" << item.event_count << ", \"" << item.text
                 << "\")";
  }
  return out;
}
std::ostream& operator<<(std::ostream& out,
                         const std::vector<ModelItem>& items) {
  out << "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    out << (i > 0 ? ", " : "") << items[i];
  }
  return out << "]";
}

namespace {

using nlohmann::json;
namespace ev = event_type;
using Items = std::vector<ModelItem>;

ModelItem user(std::string text) {
  return {.kind = ModelItem::Kind::kUser, .text = std::move(text)};
}
ModelItem assistant(std::string text) {
  return {.kind = ModelItem::Kind::kAssistant, .text = std::move(text)};
}
ModelItem summary(std::size_t count, std::string text) {
  return {.kind = ModelItem::Kind::kSummary,
          .text = std::move(text),
          .event_count = count};
}

Envelope envelope(
    std::string sender, std::string_view type, const json& data,
    std::optional<std::vector<std::string>> audience = std::nullopt) {
  static int next_id = 0;
  Envelope e;
  e.channel_id = "chan";
  e.sender_id = std::move(sender);
  e.audience = std::move(audience);
  e.event_type = std::string(type);
  auto flex = to_flex(data);
  REQUIRE(flex.has_value());
  e.event_data = std::move(*flex);
  e.envelope_id = "e" + std::to_string(++next_id);
  return e;
}

Envelope text(std::string sender, std::string body,
              std::optional<std::vector<std::string>> audience = std::nullopt) {
  return envelope(std::move(sender), ev::kText, {{"text", std::move(body)}},
                  std::move(audience));
}

Envelope packet(std::string sender, json routing, std::string body) {
  return envelope(std::move(sender), ev::kPacket,
                  {{"routing", std::move(routing)},
                   {"context_updates",
                    {{"set", json::object()}, {"delete", json::array()}}},
                   {"body", std::move(body)}});
}

ViewPolicy windowed(std::int64_t recent_n) {
  auto policy = ViewPolicy::windowed_summary(recent_n);
  REQUIRE(policy.has_value());
  return *policy;
}

ViewPolicy named_windowed(std::int64_t recent_n) {
  auto policy = ViewPolicy::named_windowed_summary(recent_n);
  REQUIRE(policy.has_value());
  return *policy;
}

// Display names of the test agents; other ids resolve to themselves.
std::string name_for(std::string_view id) {
  static const std::map<std::string, std::string, std::less<>> names = {
      {"a1", "alice"}, {"b2", "bob"}, {"c3", "carol"}, {"z9", "Zed"}};
  auto it = names.find(id);
  return it == names.end() ? std::string(id) : it->second;
}

ChannelMetadata metadata_with(const ChannelAdapter& adapter,
                              std::size_t participants) {
  ChannelMetadata metadata;
  metadata.channel_id = "chan";
  metadata.manifest = adapter.manifest();
  metadata.creator_id = "p0";
  for (std::size_t i = 0; i < participants; ++i) {
    metadata.participants.push_back(
        {.agent_id = "p" + std::to_string(i),
         .role = i == 0 ? "initiator"
                        : (participants == 2 ? "respondent" : "participant"),
         .order = static_cast<std::int64_t>(i)});
  }
  return metadata;
}

const ConversationAdapter kConversation;

// ---- ENV-06 -----------------------------------------------------------------

TEST_CASE(
    "ENV-06 visibility: own always, null audience all, list only listed") {
  const Envelope broadcast = text("alice", "hi");
  CHECK(visible_to(broadcast, "alice"));
  CHECK(visible_to(broadcast, "bob"));
  CHECK(visible_to(broadcast, "outsider"));  // membership is not checked

  const Envelope to_bob =
      text("alice", "psst", std::vector<std::string>{"bob"});
  CHECK(visible_to(to_bob, "bob"));
  CHECK(visible_to(to_bob, "alice"));  // the sender, though not listed
  CHECK_FALSE(visible_to(to_bob, "carol"));

  const Envelope to_nobody = text("alice", "note", std::vector<std::string>{});
  CHECK(visible_to(to_nobody, "alice"));
  CHECK_FALSE(visible_to(to_nobody, "bob"));

  const Envelope listed_outsider =
      text("alice", "x", std::vector<std::string>{"outsider", "bob"});
  CHECK(visible_to(listed_outsider, "outsider"));
  CHECK(visible_to(listed_outsider, "bob"));
}

TEST_CASE(
    "ENV-06 the log keeps audience-limited envelopes whole, views filter "
    "them") {
  testing::TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  auto channel = t.open(alice, "discussion", {bob, carol});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  REQUIRE(t.say(id, alice, "broadcast").has_value());
  REQUIRE(t.say(id, bob, "private to alice", std::vector{alice}).has_value());
  REQUIRE(t.say(id, carol, "carol's reply").has_value());

  const auto wal = t.wal(id);
  std::vector<const Envelope*> texts;
  for (const auto& e : wal) {
    if (e.event_type == ev::kText) texts.push_back(&e);
  }
  REQUIRE(texts.size() == 3);
  REQUIRE(texts[1]->audience.has_value());
  CHECK(*texts[1]->audience == std::vector{alice});
  CHECK(message_text(view_of(*texts[1])) == "private to alice");

  const DiscussionAdapter discussion;
  const auto policy = ViewPolicy::full_transcript();
  CHECK(project(policy, wal, carol, discussion) ==
        Items{user("broadcast"), assistant("carol's reply")});
  CHECK(project(policy, wal, alice, discussion) ==
        Items{assistant("broadcast"), user("private to alice"),
              user("carol's reply")});
  CHECK(project(policy, wal, bob, discussion) ==
        Items{user("broadcast"), assistant("private to alice"),
              user("carol's reply")});
}

// ---- render_envelope
// ----------------------------------------------------------

TEST_CASE("default render: string text of ag2.msg.text only, empty included") {
  const ConsultingAdapter consulting;
  CHECK(consulting.render_envelope(view_of(text("a", "hello"))) == "hello");
  CHECK(consulting.render_envelope(view_of(text("a", ""))) == "");
  for (const json& bad : {json(42), json(nullptr), json(true), json::array(),
                          json{{"nested", "x"}}}) {
    CAPTURE(bad.dump());
    CHECK_FALSE(
        consulting
            .render_envelope(view_of(envelope("a", ev::kText, {{"text", bad}})))
            .has_value());
  }
  CHECK_FALSE(consulting
                  .render_envelope(view_of(
                      envelope("a", ev::kText, {{"content", "legacy"}})))
                  .has_value());
  for (std::string_view type :
       {ev::kChannelInvite, ev::kChannelOpened, ev::kChannelClosed,
        ev::kTaskCancelled, ev::kExpectationViolated, ev::kContextSet,
        ev::kPacket, std::string_view("custom.event")}) {
    CAPTURE(type);
    CHECK_FALSE(
        consulting
            .render_envelope(view_of(envelope("a", type, {{"text", "hidden"}})))
            .has_value());
  }
  Envelope empty = text("a", "x");
  empty.event_data.clear();
  CHECK_FALSE(consulting.render_envelope(view_of(empty)).has_value());
}

TEST_CASE("workflow renders packets as packet text") {
  const WorkflowAdapter workflow;
  auto render = [&](const Envelope& e) {
    return workflow.render_envelope(view_of(e));
  };
  const json handoff = {
      {"kind", "handoff"}, {"tool", "escalate"}, {"reason", "needs a lawyer"}};
  CHECK(render(packet("a", handoff, "Passing this on.")) ==
        "[Handed off via escalate] needs a lawyer\nPassing this on.");
  CHECK(render(packet("a", handoff, "")) ==
        "[Handed off via escalate] needs a lawyer");
  // No reason: the line is stripped of the trailing space.
  CHECK(render(packet("a", {{"kind", "handoff"}, {"tool", "escalate"}},
                      "body")) == "[Handed off via escalate]\nbody");
  // The tool defaults to empty in the history view.
  CHECK(render(packet("a", {{"kind", "handoff"}, {"reason", "why"}}, "")) ==
        "[Handed off via ] why");
  CHECK(render(packet("a", {{"kind", "handoff"}}, "")) == "[Handed off via ]");
  // Python's strip(): trailing whitespace of the reason goes, Unicode
  // spaces included; the body is kept verbatim.
  CHECK(render(packet("a",
                      {{"kind", "handoff"},
                       {"tool", "t"},
                       {"reason", "why \n\t\u00a0\u3000"}},
                      "  body  ")) == "[Handed off via t] why\n  body  ");
  // A targeted hand-off renders the same way (the target is not shown).
  CHECK(render(packet("a",
                      {{"kind", "handoff"},
                       {"tool", "handoff"},
                       {"reason", "r"},
                       {"target", "bob"}},
                      "")) == "[Handed off via handoff] r");
  // Text and finish packets show only their body.
  CHECK(render(packet("a", {{"kind", "text"}}, "plain")) == "plain");
  CHECK(render(packet("a",
                      {{"kind", "finish"},
                       {"tool", "done"},
                       {"reason", "finished"},
                       {"summary", "s"}},
                      "final")) == "final");
  // Nothing to show -> skipped.
  CHECK_FALSE(render(packet("a", {{"kind", "text"}}, "")).has_value());
  CHECK_FALSE(render(packet("a", {{"kind", "finish"}}, "")).has_value());
  CHECK_FALSE(render(envelope("a", ev::kPacket, json::object())).has_value());
  CHECK_FALSE(render(envelope("a", ev::kPacket, {{"body", 7}})).has_value());
  CHECK(render(envelope("a", ev::kPacket,
                        {{"routing", "handoff"}, {"body", "b"}})) == "b");
  // Non-string tool or reason count as absent.
  CHECK(render(packet("a",
                      {{"kind", "handoff"}, {"tool", nullptr}, {"reason", 3}},
                      "")) == "[Handed off via ]");
  // Everything else follows the default rule.
  CHECK(render(text("a", "hi")) == "hi");
  CHECK(render(text("a", "")) == "");
  CHECK_FALSE(render(envelope("a", ev::kContextSet, {{"set", {{"k", 1}}}}))
                  .has_value());
}

TEST_CASE("only workflow projects packets") {
  const std::vector<Envelope> log = {
      text("a1", "question"),
      packet("b2",
             {{"kind", "handoff"}, {"tool", "route"}, {"reason", "to carol"}},
             "see carol"),
      envelope("c3", ev::kContextSet, {{"set", {{"k", 1}}}}),
  };
  const WorkflowAdapter workflow;
  const DiscussionAdapter discussion;
  CHECK(
      project(ViewPolicy::named_transcript(), log, "c3", workflow, name_for) ==
      Items{user("[alice]: question"),
            user("[bob]: [Handed off via route] to carol\nsee carol")});
  CHECK(project(ViewPolicy::named_transcript(), log, "c3", discussion,
                name_for) == Items{user("[alice]: question")});
}

// ---- the four views
// -----------------------------------------------------------

TEST_CASE("full transcript: own envelopes are assistant turns, others' user") {
  const std::vector<Envelope> log = {
      envelope("a1", ev::kChannelInvite, json::object(),
               std::vector<std::string>{"b2"}),
      text("a1", "hi"),
      envelope("b2", ev::kChannelInviteAck, json::object()),
      text("b2", "hello"),
      envelope("a1", ev::kChannelOpened, json::object()),
      text("a1", ""),
  };
  CHECK(project(ViewPolicy::full_transcript(), log, "b2", kConversation) ==
        Items{user("hi"), assistant("hello"), user("")});
  CHECK(project(ViewPolicy::full_transcript(), log, "a1", kConversation) ==
        Items{assistant("hi"), user("hello"), assistant("")});
  CHECK(
      project(ViewPolicy::full_transcript(), {}, "a1", kConversation).empty());
}

TEST_CASE("named transcript labels others' lines with the sender name") {
  const std::vector<Envelope> log = {text("a1", "hi"), text("b2", "hello"),
                                     text("x7", "who am I"),
                                     text("c3", "me too")};
  const auto policy = ViewPolicy::named_transcript();
  CHECK(policy.name() == "named_transcript");
  CHECK(project(policy, log, "b2", kConversation, name_for) ==
        Items{user("[alice]: hi"), assistant("hello"), user("[x7]: who am I"),
              user("[carol]: me too")});
  // Without a resolver every id is its own name.
  CHECK(project(policy, log, "b2", kConversation) ==
        Items{user("[a1]: hi"), assistant("hello"), user("[x7]: who am I"),
              user("[c3]: me too")});
}

TEST_CASE("VIEW-02 WindowedSummary passes short history through") {
  const std::vector<Envelope> log = {text("alice", "hi"), text("bob", "hello"),
                                     text("alice", "how's it going")};
  const Items expected = {user("hi"), assistant("hello"),
                          user("how's it going")};
  CHECK(project(windowed(10), log, "bob", kConversation) == expected);
  // Exactly recent_n shown envelopes still need no summary.
  CHECK(project(windowed(3), log, "bob", kConversation) == expected);
  // The name resolver does not change the unnamed view.
  CHECK(project(windowed(10), log, "bob", kConversation, name_for) == expected);
}

TEST_CASE("VIEW-03 WindowedSummary compacts older history") {
  std::vector<Envelope> log;
  for (int i = 0; i < 8; ++i) {
    log.push_back(text("alice", "msg " + std::to_string(i)));
  }
  CHECK(project(windowed(3), log, "bob", kConversation) ==
        Items{summary(5, "Earlier in this channel: 5 messages from alice."),
              user("msg 5"), user("msg 6"), user("msg 7")});

  // Never more than recent_n + 1 items, whatever the log length.
  for (std::int64_t recent_n : {1, 2, 3, 10}) {
    for (std::size_t length = 0; length <= log.size(); ++length) {
      const std::span<const Envelope> prefix(log.data(), length);
      const auto items =
          project(windowed(recent_n), prefix, "bob", kConversation);
      CHECK(items.size() <= static_cast<std::size_t>(recent_n) + 1);
      CHECK(items.size() ==
            std::min(prefix.size(),
                     static_cast<std::size_t>(recent_n) +
                         (prefix.size() > static_cast<std::size_t>(recent_n))));
    }
  }
}

TEST_CASE("VIEW-04 summary wording edge cases") {
  // One elided message: singular.
  const std::vector<Envelope> two = {text("alice", "first"),
                                     text("bob", "second")};
  CHECK(project(windowed(1), two, "bob", kConversation) ==
        Items{summary(1, "Earlier in this channel: 1 message from alice."),
              assistant("second")});

  // Several senders: unique, sorted, comma-separated; ids, not names, in
  // the unnamed view; the participant's own envelopes count too.
  const std::vector<Envelope> log = {text("c3", "1"), text("a1", "2"),
                                     text("b2", "3"), text("a1", "4"),
                                     text("z9", "5"), text("b2", "6")};
  CHECK(project(windowed(1), log, "b2", kConversation, name_for) ==
        Items{summary(5,
                      "Earlier in this channel: 5 messages from a1, b2, "
                      "c3, z9."),
              assistant("6")});
  // The named view lists sorted unique names (code-point order: "Zed"
  // sorts before lower case), and labels recent lines.
  CHECK(project(named_windowed(2), log, "a1", kConversation, name_for) ==
        Items{summary(4,
                      "Earlier in this channel: 4 messages from alice, "
                      "bob, carol."),
              user("[Zed]: 5"), user("[bob]: 6")});
  CHECK(project(named_windowed(1), log, "a1", kConversation, name_for) ==
        Items{summary(5,
                      "Earlier in this channel: 5 messages from Zed, "
                      "alice, bob, carol."),
              user("[bob]: 6")});
  // Two ids with one name are one speaker.
  const std::vector<Envelope> twins = {text("x1", "a"), text("x2", "b"),
                                       text("x3", "c")};
  auto same_name = [](std::string_view) { return std::string("twin"); };
  CHECK(project(named_windowed(1), twins, "me", kConversation, same_name) ==
        Items{summary(2, "Earlier in this channel: 2 messages from twin."),
              user("[twin]: c")});
  CHECK(summary_text(0, {}) == "Earlier in this channel: 0 messages from .");
}

TEST_CASE("VIEW-05 audience filtering in projections") {
  const std::vector<Envelope> log = {
      text("alice", "broadcast"),
      text("alice", "private to bob", std::vector<std::string>{"bob"}),
      text("bob", "bob's reply")};
  CHECK(project(windowed(10), log, "carol", kConversation) ==
        Items{user("broadcast"), user("bob's reply")});
  CHECK(project(ViewPolicy::full_transcript(), log, "carol", kConversation) ==
        Items{user("broadcast"), user("bob's reply")});
  CHECK(project(windowed(10), log, "bob", kConversation) ==
        Items{user("broadcast"), user("private to bob"),
              assistant("bob's reply")});
  // Hidden envelopes do not count towards the window or the summary.
  CHECK(project(windowed(1), log, "carol", kConversation) ==
        Items{summary(1, "Earlier in this channel: 1 message from alice."),
              user("bob's reply")});
}

TEST_CASE("VIEW-06 window size must be positive") {
  for (std::int64_t bad : {0, -1, -42}) {
    CAPTURE(bad);
    const std::string message =
        "recent_n must be >= 1, got " + std::to_string(bad);
    auto plain = ViewPolicy::windowed_summary(bad);
    REQUIRE_FALSE(plain.has_value());
    CHECK(plain.error().kind == ErrorKind::kInvalid);
    CHECK(plain.error().message == message);
    auto named = ViewPolicy::named_windowed_summary(bad);
    REQUIRE_FALSE(named.has_value());
    CHECK(named.error().kind == ErrorKind::kInvalid);
    CHECK(named.error().message == message);
  }
  CHECK(windowed(1).recent_n() == 1);
  CHECK(named_windowed(1).recent_n() == 1);
}

TEST_CASE("VIEW-09 default view per channel type") {
  const ConsultingAdapter consulting;
  const DiscussionAdapter discussion;
  const WorkflowAdapter workflow;

  const auto consult =
      consulting.default_view_policy(metadata_with(consulting, 2), "p1");
  CHECK(consult == ViewPolicy::full_transcript());
  CHECK(consult.name() == consulting.manifest().default_view_policy);
  CHECK_FALSE(consult.recent_n().has_value());

  const auto conversation =
      kConversation.default_view_policy(metadata_with(kConversation, 2), "p1");
  CHECK(conversation == windowed(10));
  CHECK(conversation.kind() == ViewKind::kWindowedSummary);
  CHECK_FALSE(conversation.named());
  CHECK(conversation.name() == kConversation.manifest().default_view_policy);

  for (const ChannelAdapter* adapter :
       {static_cast<const ChannelAdapter*>(&discussion),
        static_cast<const ChannelAdapter*>(&workflow)}) {
    CAPTURE(adapter->manifest().type);
    for (auto item : std::vector<std::pair<std::size_t, std::int64_t>>{
             {1, 4}, {2, 4}, {3, 6}, {5, 10}}) {
      // Not bindings: CAPTURE captures them, which clang 14 cannot.
      const std::size_t participants = item.first;
      const std::int64_t recent_n = item.second;
      CAPTURE(participants);
      const auto policy = adapter->default_view_policy(
          metadata_with(*adapter, participants), "p0");
      CHECK(policy == named_windowed(recent_n));
      CHECK(policy.named());
      CHECK(policy.name() == adapter->manifest().default_view_policy);
    }
  }
}

TEST_CASE("VIEW-11 projection is a pure function of the log") {
  std::vector<Envelope> log = {
      text("a1", "one"),
      envelope("b2", ev::kText, {{"text", 42}}),
      envelope("b2", ev::kText, {{"text", nullptr}}),
      envelope("b2", ev::kText, {{"text", {{"rich", true}}}}),
      envelope("b2", ev::kText, json::object()),
      text("b2", "two"),
      text("c3", "three", std::vector<std::string>{"a1"}),
      text("a1", "four"),
  };
  const std::vector<Envelope> before = log;
  for (const auto& policy :
       {ViewPolicy::full_transcript(), ViewPolicy::named_transcript(),
        windowed(2), named_windowed(2)}) {
    CAPTURE(policy.name());
    for (std::string_view who : {"a1", "b2", "c3", "nobody"}) {
      const auto first = project(policy, log, who, kConversation, name_for);
      const auto second = project(policy, log, who, kConversation, name_for);
      CHECK(first == second);
    }
  }
  // The input is not touched.
  REQUIRE(log.size() == before.size());
  for (std::size_t i = 0; i < log.size(); ++i) {
    CHECK(log[i].event_data == before[i].event_data);
    CHECK(log[i].audience == before[i].audience);
  }
  // Non-string text payloads are skipped, not errors.
  CHECK(project(named_windowed(2), log, "b2", kConversation, name_for) ==
        Items{summary(1, "Earlier in this channel: 1 message from alice."),
              assistant("two"), user("[alice]: four")});
  CHECK(project(ViewPolicy::full_transcript(), log, "a1", kConversation) ==
        Items{assistant("one"), user("two"), user("three"), assistant("four")});
}

TEST_CASE("VIEW-11 projection is the same after a restart") {
  testing::TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  auto channel = t.open(alice, "discussion", {bob, carol});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  for (int round = 0; round < 3; ++round) {
    const std::string n = std::to_string(round);
    REQUIRE(t.say(id, alice, "alice " + n).has_value());
    REQUIRE(t.say(id, bob, "bob " + n, std::vector{alice}).has_value());
    REQUIRE(t.say(id, carol, "carol " + n).has_value());
  }
  REQUIRE(t.post(id, bob, ev::kPacket, {{"body", "aside"}}).has_value());

  const DiscussionAdapter discussion;
  auto names = [&t](std::string_view agent) {
    auto passport = t.hub().get_agent(agent);
    return passport ? passport->name : std::string(agent);
  };
  auto views = [&] {
    const auto wal = t.wal(id);
    const auto policy = discussion.default_view_policy(*channel, carol);
    std::vector<Items> out;
    for (const auto& who : {alice, bob, carol}) {
      out.push_back(project(policy, wal, who, discussion, names));
    }
    return out;
  };
  const auto before = views();
  REQUIRE(before.size() == 3);
  // Carol sees alice's and her own lines, bob's never; the window is
  // max(2 * 3, 4) = 6 of her 6 visible texts.
  CHECK(before[2] == Items{user("[alice]: alice 0"), assistant("carol 0"),
                           user("[alice]: alice 1"), assistant("carol 1"),
                           user("[alice]: alice 2"), assistant("carol 2")});
  // Alice sees all 9 texts: 3 go into the summary.
  CHECK(before[0].size() == 7);
  CHECK(before[0].front() ==
        summary(3,
                "Earlier in this channel: 3 messages from alice, bob, "
                "carol."));
  CHECK(before[0].back() == user("[carol]: carol 2"));

  t.restart();
  CHECK(views() == before);
}

}  // namespace
}  // namespace parley::engine
