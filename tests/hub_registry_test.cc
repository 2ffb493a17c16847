// Registry and identity (REG-*) and the hub-level envelope rules (ENV-03,
// ENV-06, ENV-07), through the hub's C++ API and, for JSON shapes, the
// control-plane op layer. Parsing details (ENV-01/02/04, IDS-01/02,
// REG-18/19/22's scheme table) are pinned in records_json_test, clock_ids_test
// and registry_rules_test.
//
// Parley is event-sourced: where AG2 writes, rewrites or deletes identity
// files, Parley appends records to the log (AgentRegistered, ResumeSet,
// RuleSet, SkillSet, AgentUnregistered) and folds them. "Persisted" is checked
// by reading the log and by restart(); "deleted" by the folded registry after
// restart.
#include <doctest/doctest.h>

#include <algorithm>
#include <barrier>
#include <set>
#include <thread>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/base/ids.h"
#include "engine/json/records_json.h"
#include "parley/schemas/log_generated.h"
#include "tests/hub_fixture.h"

namespace parley {
namespace {

using engine::ErrorKind;
using engine::Resume;
using engine::Rule;
using nlohmann::json;
using testing::TestHub;

constexpr std::string_view kT0 = "2026-01-01T00:00:00+00:00";

template <typename T>
engine::Error error_of(const engine::Result<T>& result) {
  REQUIRE_FALSE(result.has_value());
  return result.error();
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

Resume resume_with(std::vector<std::string> claims, std::string summary = "") {
  Resume resume;
  resume.claimed_capabilities = std::move(claims);
  resume.summary = std::move(summary);
  return resume;
}

std::vector<std::string> names_of(const std::vector<engine::Passport>& list) {
  std::vector<std::string> out;
  for (const auto& passport : list) out.push_back(passport.name);
  return out;
}

std::vector<std::string> ids_of(const std::vector<engine::Passport>& list) {
  std::vector<std::string> out;
  for (const auto& passport : list) out.push_back(*passport.agent_id);
  return out;
}

std::vector<std::string> sorted(std::vector<std::string> ids) {
  std::ranges::sort(ids);
  return ids;
}

json flex(const flatbuffers::Vector<std::uint8_t>* bytes) {
  if (!bytes) return nullptr;
  return engine::flex_to_json({bytes->data(), bytes->size()});
}

// The identity records of the log, in log order, as JSON:
//   {"record": "registered", "agent_id", "passport", "resume", "rule",
//    "skill_md"}, {"record": "unregistered", "agent_id"},
//   {"record": "updated", "agent_id", "what", "value"}.
std::vector<json> identity_log(TestHub& t) {
  std::vector<json> out;
  auto read = t.hub().store().read(
      1, log::kLastSequence, [&](std::uint64_t, std::string_view bytes) {
        const schema::Record* root = schema::GetRecord(bytes.data());
        if (const auto* added = root->body_as_AgentRegistered()) {
          out.push_back(
              {{"record", "registered"},
               {"agent_id", added->agent_id()->str()},
               {"passport", flex(added->passport())},
               {"resume", flex(added->resume())},
               {"rule", flex(added->rule())},
               {"skill_md", added->skill_md() ? json(added->skill_md()->str())
                                              : json(nullptr)}});
        } else if (const auto* removed = root->body_as_AgentUnregistered()) {
          out.push_back({{"record", "unregistered"},
                         {"agent_id", removed->agent_id()->str()}});
        } else if (const auto* resume = root->body_as_ResumeSet()) {
          out.push_back({{"record", "updated"},
                         {"agent_id", resume->agent_id()->str()},
                         {"what", "resume"},
                         {"value", flex(resume->resume())}});
        } else if (const auto* rule = root->body_as_RuleSet()) {
          out.push_back({{"record", "updated"},
                         {"agent_id", rule->agent_id()->str()},
                         {"what", "rule"},
                         {"value", flex(rule->rule())}});
        } else if (const auto* skill = root->body_as_SkillSet()) {
          out.push_back(
              {{"record", "updated"},
               {"agent_id", skill->agent_id()->str()},
               {"what", "skill"},
               {"value", skill->skill_md() ? json(skill->skill_md()->str())
                                           : json(nullptr)}});
        }
        return true;
      });
  REQUIRE(read.has_value());
  return out;
}

// Audit records of `kind`, in log order.
std::vector<json> audit_of(TestHub& t, std::string_view kind) {
  std::vector<json> out;
  for (auto& record : t.audit()) {
    if (record["kind"] == kind) out.push_back(std::move(record));
  }
  return out;
}

std::string wire_code_and_message(const engine::Error& error) {
  return std::string(engine::wire_code(error.kind)) + ": " + error.message;
}

// --- REG-01 ------------------------------------------------------------

TEST_CASE(
    "REG-01 registration stamps an id and persists passport, resume, rule "
    "and skill") {
  TestHub t;
  Rule rule;
  rule.limits.channel_ttl_default = std::string("4h");
  const std::string skill = "# Alice\nDoes math.";
  const auto alice = t.add_agent("alice", resume_with({"math"}), rule, skill);

  // A hub-minted id, resolvable by name.
  CHECK(engine::has_id_shape(alice));
  auto passport = t.hub().get_agent("alice");
  REQUIRE(passport.has_value());
  CHECK(passport->agent_id == alice);
  CHECK(passport->name == "alice");
  CHECK(passport->created_at == kT0);

  // One AgentRegistered record holds all four parts.
  const auto log = identity_log(t);
  REQUIRE(log.size() == 1);
  CHECK(log[0]["record"] == "registered");
  CHECK(log[0]["agent_id"] == alice);
  CHECK(log[0]["passport"]["name"] == "alice");
  CHECK(log[0]["passport"]["agent_id"] == alice);
  CHECK(log[0]["resume"]["claimed_capabilities"] == json{"math"});
  CHECK(log[0]["rule"]["limits"]["channel_ttl_default"] == "4h");
  CHECK(log[0]["skill_md"] == skill);

  // And they survive a restart.
  t.restart();
  CHECK(t.hub().get_agent("alice")->agent_id == alice);
  CHECK(t.hub().get_resume(alice)->claimed_capabilities ==
        std::vector<std::string>{"math"});
  CHECK(std::get<std::string>(
            t.hub().get_rule(alice)->limits.channel_ttl_default) == "4h");
  CHECK(t.hub().get_skill(alice) == skill);
}

TEST_CASE(
    "REG-01 without a rule the default rule is stored, an explicit rule is "
    "stored verbatim") {
  TestHub t;
  const auto bob = t.add_agent("bob");
  Rule explicit_rule;
  explicit_rule.access.inbound_from = {"ag2:*:*"};
  const auto carol = t.add_agent("carol", {}, explicit_rule);

  const auto log = identity_log(t);
  REQUIRE(log.size() == 2);
  CHECK(log[0]["rule"] == engine::to_json(Rule{}));
  CHECK(log[1]["rule"] == engine::to_json(explicit_rule));
  CHECK(log[1]["rule"]["access"]["inbound_from"] == json{"ag2:*:*"});

  t.restart();
  CHECK(engine::to_json(*t.hub().get_rule(bob)) == engine::to_json(Rule{}));
  CHECK(t.hub().get_rule(carol)->access.inbound_from ==
        std::vector<std::string>{"ag2:*:*"});
}

TEST_CASE("REG-01 register op returns the stamped passport in AG2's shape") {
  TestHub t;
  auto result = t.ops().call("register", {{"passport", {{"name", "alice"}}},
                                          {"resume", json::object()}});
  REQUIRE_MESSAGE(result.has_value(), testing::error_message(result));
  const json& passport = *result;
  REQUIRE(passport["agent_id"].is_string());
  CHECK(engine::has_id_shape(passport["agent_id"].get<std::string>()));
  CHECK(passport["created_at"] == kT0);
  CHECK(passport["name"] == "alice");
  CHECK(passport["kind"].is_null());
  CHECK(passport["version"] == 1);
  // Exactly AG2's Passport keys (its client refuses unknown ones).
  std::set<std::string> keys;
  for (const auto& [key, value] : passport.items()) keys.insert(key);
  CHECK(keys == std::set<std::string>{
                    "agent_id", "auth", "cost", "created_at", "hub_id", "kind",
                    "model", "name", "owner", "provider", "region", "version"});
  // get_agent answers the same object by name and by id.
  auto by_name = t.ops().call("get_agent", {{"name_or_id", "alice"}});
  auto by_id =
      t.ops().call("get_agent", {{"name_or_id", passport["agent_id"]}});
  REQUIRE(by_name.has_value());
  REQUIRE(by_id.has_value());
  CHECK(*by_name == passport);
  CHECK(*by_id == passport);
}

TEST_CASE("REG-01 credentials are neither stored nor echoed") {
  TestHub t;
  auto result = t.ops().call(
      "register",
      {{"passport",
        {{"name", "alice"},
         {"auth", {{"scheme", "none"}, {"claim", {{"token", "s3cret"}}}}}}},
       {"resume", json::object()}});
  REQUIRE_MESSAGE(result.has_value(), testing::error_message(result));
  CHECK((*result)["auth"]["claim"] == json::object());
  CHECK((*result)["auth"]["scheme"] == "none");
  CHECK(engine::to_json(*t.hub().get_agent("alice"))["auth"]["claim"] ==
        json::object());
  const auto log = identity_log(t);
  REQUIRE(log.size() == 1);
  CHECK(log[0]["passport"]["auth"]["claim"] == json::object());
}

TEST_CASE("REG-01 registration is audited as agent_registered") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  CHECK(t.audit() == std::vector<json>{{{"at", kT0},
                                        {"kind", "agent_registered"},
                                        {"agent_id", alice},
                                        {"name", "alice"}}});
}

// --- REG-02 / REG-03 ---------------------------------------------------

TEST_CASE("REG-02 duplicate name is rejected without side effects") {
  TestHub t;
  const auto alice = t.add_agent("alice", resume_with({"math"}));
  const auto records_before = t.hub().store().last_sequence();

  auto again = t.hub().register_identity(
      {.name = "alice"}, resume_with({"debate"}), "# other", std::nullopt);
  const auto error = error_of(again);
  CHECK(error.kind == ErrorKind::kProtocol);
  CHECK(error.message == "name 'alice' already registered (agent_id=" + alice +
                             "); unregister it before re-registering.");

  // Nothing was written: no identity record, no audit record.
  CHECK(t.hub().store().last_sequence() == records_before);
  const auto listed = t.hub().list_agents({});
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].name == "alice");
  CHECK(listed[0].agent_id == alice);
  CHECK(t.hub().agents_with_capability("debate").empty());
  CHECK(t.hub().get_skill(alice) == std::nullopt);

  // Over the wire it is a protocol_error.
  auto op = t.ops().call("register", {{"passport", {{"name", "alice"}}},
                                      {"resume", json::object()}});
  CHECK(engine::wire_code(error_of(op).kind) == "protocol_error");
  CHECK(contains(error_of(op).message, "already registered"));
}

TEST_CASE("REG-03 concurrent registrations of one name serialize") {
  TestHub t;
  constexpr int kThreads = 3;
  std::barrier start(kThreads);
  std::vector<engine::Result<engine::Passport>> results(
      kThreads, std::unexpected(engine::Error{ErrorKind::kInvalid, "unset"}));
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        results[i] = t.hub().register_identity({.name = "dup"}, {},
                                               std::nullopt, std::nullopt);
      });
    }
  }
  std::vector<std::string> winners;
  int refused = 0;
  for (const auto& result : results) {
    if (result) {
      winners.push_back(*result->agent_id);
    } else {
      ++refused;
      CHECK(result.error().kind == ErrorKind::kProtocol);
      CHECK(contains(result.error().message, "already registered"));
    }
  }
  REQUIRE(winners.size() == 1);
  CHECK(refused == 2);
  const auto listed = t.hub().list_agents({});
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].agent_id == winners[0]);
  CHECK(audit_of(t, "agent_registered").size() == 1);
}

// --- REG-04 / REG-05 ---------------------------------------------------

TEST_CASE(
    "REG-04 unregister erases the identity everywhere but not channel "
    "history") {
  TestHub t;
  const auto alice =
      t.add_agent("alice", resume_with({"math"}), std::nullopt, "# Alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  REQUIRE(t.say(channel->channel_id, alice, "hello").has_value());
  const auto wal_before = t.wal_types(channel->channel_id);

  REQUIRE(t.hub().unregister(alice).has_value());

  auto check_gone = [&] {
    const auto lookup = error_of(t.hub().get_agent(alice));
    CHECK(lookup.kind == ErrorKind::kNotFound);
    CHECK(lookup.message == "agent not found: " + alice);
    CHECK(error_of(t.hub().get_agent("alice")).kind == ErrorKind::kNotFound);
    CHECK(t.hub().find_agent_id("alice") == std::nullopt);
    CHECK(names_of(t.hub().list_agents({})) == std::vector<std::string>{"bob"});
    CHECK(error_of(t.hub().get_resume(alice)).message ==
          "resume not found: " + alice);
    CHECK(error_of(t.hub().get_rule(alice)).message ==
          "rule not found: " + alice);
    CHECK(t.hub().get_skill(alice) == std::nullopt);
    CHECK(t.hub().agents_with_capability("math").empty());
    CHECK(t.hub().name_for(alice) == alice);
    // The channel and its log stay; alice is still listed as a participant.
    CHECK(t.wal_types(channel->channel_id) == wal_before);
    CHECK(t.hub().get_channel(channel->channel_id)->participants.size() == 2);
  };
  check_gone();
  t.restart();
  check_gone();

  // The log keeps the registration and records the removal (append-only).
  const auto log = identity_log(t);
  REQUIRE(log.size() == 3);
  CHECK(log[2] == json{{"record", "unregistered"}, {"agent_id", alice}});
  const auto audited = audit_of(t, "agent_unregistered");
  CHECK(audited == std::vector<json>{{{"at", kT0},
                                      {"kind", "agent_unregistered"},
                                      {"agent_id", alice},
                                      {"name", "alice"}}});
}

TEST_CASE("REG-04 deliveries to an unregistered participant are skipped") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  const auto delivered = t.inbox(alice).size();
  REQUIRE(t.hub().unregister(alice).has_value());
  REQUIRE(t.say(channel->channel_id, bob, "anyone there?").has_value());
  CHECK(t.inbox(alice).size() == delivered);
}

TEST_CASE("REG-04 unregistering an unknown agent is not found") {
  TestHub t;
  const auto error = error_of(t.hub().unregister("ghost"));
  CHECK(error.kind == ErrorKind::kNotFound);
  CHECK(error.message == "agent not registered: ghost");
}

TEST_CASE("REG-05 re-registering a released name yields a new id") {
  TestHub t;
  const auto first = t.add_agent("reuse");
  REQUIRE(t.hub().unregister(first).has_value());
  const auto second = t.add_agent("reuse");
  CHECK(second != first);
  CHECK(t.hub().find_agent_id("reuse") == second);
  t.restart();
  CHECK(t.hub().find_agent_id("reuse") == second);
  CHECK(ids_of(t.hub().list_agents({})) == std::vector<std::string>{second});
}

// --- REG-07 ------------------------------------------------------------

TEST_CASE("REG-07 lookup by name or by id gives the same identity") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  auto by_name = t.hub().get_agent("alice");
  auto by_id = t.hub().get_agent(alice);
  REQUIRE(by_name.has_value());
  REQUIRE(by_id.has_value());
  CHECK(engine::to_json(*by_name) == engine::to_json(*by_id));
  const auto ghost = error_of(t.hub().get_agent("ghost"));
  CHECK(ghost.kind == ErrorKind::kNotFound);
  CHECK(ghost.message == "agent not found: ghost");
  CHECK(engine::wire_code(
            error_of(t.ops().call("get_agent", {{"name_or_id", "ghost"}}))
                .kind) == "not_found");
}

TEST_CASE("REG-07 names shaped like an agent id are refused") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto before = t.hub().store().last_sequence();
  for (const std::string& name :
       {std::string("0123456789abcdef0123456789abcdef"), alice}) {
    const auto error = error_of(t.hub().register_identity(
        {.name = name}, {}, std::nullopt, std::nullopt));
    CHECK(error.kind == ErrorKind::kProtocol);
    CHECK(error.message ==
          "name '" + name + "' is, or has the shape of, an agent id");
  }
  CHECK(t.hub().store().last_sequence() == before);
  auto op = t.ops().call(
      "register", {{"passport", {{"name", "ffffffffffffffffffffffffffffffff"}}},
                   {"resume", json::object()}});
  CHECK(engine::wire_code(error_of(op).kind) == "protocol_error");
}

TEST_CASE("REG-07 look-alike names stay allowed") {
  TestHub t;
  // Upper-case hex, 31 and 33 hex digits, a dashed UUID, a trailing space.
  for (const char* name :
       {"0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef0123456789abcde",
        "0123456789abcdef0123456789abcdef0",
        "01234567-89ab-cdef-0123-456789abcdef",
        "0123456789abcdef0123456789abcdef "}) {
    CAPTURE(name);
    auto registered = t.hub().register_identity({.name = name}, {},
                                                std::nullopt, std::nullopt);
    CHECK(registered.has_value());
  }
  CHECK(t.hub().list_agents({}).size() == 5);
}

// --- REG-08 ------------------------------------------------------------

TEST_CASE("REG-08 discovery filters") {
  TestHub t;
  t.add_agent("alice", resume_with({"analysis", "research"}, "senior analyst"));
  t.add_agent("bob", resume_with({"debate"}));
  t.add_agent("reviewer", {}, std::nullopt, std::nullopt, "human");
  auto names = [&](engine::AgentFilter filter) {
    return names_of(t.hub().list_agents(filter));
  };
  using V = std::vector<std::string>;
  CHECK(names({.capability = "debate"}) == V{"bob"});
  CHECK(names({.query = "senior"}) == V{"alice"});
  CHECK(names({.query = "SENIOR"}) == V{"alice"});  // case-insensitive
  CHECK(names({.query = "bob"}).empty());           // summary only, not names
  CHECK(names({.kind = "agent"}) == V{"alice", "bob"});  // null kind = agent
  CHECK(names({.kind = "human"}) == V{"reviewer"});
  CHECK(names({}) == V{"alice", "bob", "reviewer"});  // registration order
  CHECK(names({.limit = 2}) == V{"alice", "bob"});
}

TEST_CASE("REG-08 query lowercases non-ASCII text as Python's str.lower") {
  // AG2 compares query.lower() in summary.lower() with Unicode case
  // mapping, so "ÄRZTIN" finds "Senior Ärztin".
  TestHub t;
  t.add_agent("alice", resume_with({}, "Senior \xc3\x84rztin"));  // Ärztin
  CHECK(names_of(t.hub().list_agents({.query = "\xc3\xa4rztin"})) ==
        std::vector<std::string>{"alice"});  // ärztin
  CHECK(names_of(t.hub().list_agents({.query = "\xc3\x84RZTIN"})) ==
        std::vector<std::string>{"alice"});  // ÄRZTIN
}

TEST_CASE("REG-08 list_agents op filters and sorts by name") {
  TestHub t;
  t.add_agent("zed", resume_with({"debate"}));
  t.add_agent("amy", resume_with({"debate"}));
  t.add_agent("reviewer", {}, std::nullopt, std::nullopt, "human");
  auto listed = t.ops().call("list_agents",
                             {{"capability", "debate"}, {"sort_by", "name"}});
  REQUIRE(listed.has_value());
  REQUIRE(listed->size() == 2);
  CHECK((*listed)[0]["name"] == "amy");
  CHECK((*listed)[1]["name"] == "zed");
  auto humans = t.ops().call("list_agents", {{"kind", "human"}});
  REQUIRE(humans.has_value());
  REQUIRE(humans->size() == 1);
  CHECK((*humans)[0]["kind"] == "human");
}

TEST_CASE("REG-08 discovery reads the same after restart") {
  TestHub t;
  t.add_agent("alice", resume_with({"analysis"}, "senior analyst"));
  t.add_agent("bob", resume_with({"debate"}));
  t.restart();
  CHECK(names_of(t.hub().list_agents({.capability = "debate"})) ==
        std::vector<std::string>{"bob"});
  CHECK(names_of(t.hub().list_agents({.query = "senior"})) ==
        std::vector<std::string>{"alice"});
  CHECK(names_of(t.hub().list_agents({})) ==
        std::vector<std::string>{"alice", "bob"});
}

// --- REG-09 .. REG-11: the capability index ---------------------------

TEST_CASE("REG-09 set_resume keeps the capability index in sync") {
  TestHub t;
  const auto alice = t.add_agent("alice", resume_with({"old"}));
  t.clock().advance(std::chrono::seconds(5));

  Resume first = resume_with({"new-skill"}, "updated");
  first.version = 42;  // ignored: the hub bumps the previous version
  REQUIRE(t.hub().set_resume(alice, first).has_value());
  CHECK(ids_of(t.hub().list_agents({.capability = "new-skill"})) ==
        std::vector<std::string>{alice});
  CHECK(t.hub().agents_with_capability("old").empty());
  auto resume = t.hub().get_resume(alice);
  REQUIRE(resume.has_value());
  CHECK(resume->summary == "updated");
  CHECK(resume->last_updated == "2026-01-01T00:00:05+00:00");
  CHECK(resume->version == 2);

  REQUIRE(t.hub().set_resume(alice, resume_with({}, "updated2")).has_value());
  CHECK(t.hub().agents_with_capability("new-skill").empty());
  CHECK(t.hub().get_resume(alice)->version == 3);

  t.restart();
  CHECK(t.hub().agents_with_capability("new-skill").empty());
  CHECK(t.hub().get_resume(alice)->summary == "updated2");
  CHECK(t.hub().get_resume(alice)->version == 3);

  const auto audited = audit_of(t, "resume_set");
  REQUIRE(audited.size() == 2);
  CHECK(audited[0] == json{{"at", "2026-01-01T00:00:05+00:00"},
                           {"kind", "resume_set"},
                           {"source", "tenant"},
                           {"agent_id", alice},
                           {"version", 2}});
  CHECK(audited[1]["version"] == 3);
}

TEST_CASE("REG-09 set_resume of an unknown agent is not found") {
  TestHub t;
  const auto error = error_of(t.hub().set_resume("ghost", {}));
  CHECK(error.kind == ErrorKind::kNotFound);
  CHECK(error.message == "agent not registered: ghost");
}

TEST_CASE("REG-10 the derived capability index is exact") {
  // Parley keeps no index file; the index is folded from the log, so it is
  // checked live and after a restart (= AG2's persisted index).
  TestHub t;
  const auto alice = t.add_agent("alice");
  const std::vector<std::string> just_alice{alice};
  auto index_is =
      [&](const std::map<std::string, std::vector<std::string>>& expected) {
        for (const auto& capability : {"math", "policy", "debate"}) {
          CAPTURE(capability);
          auto it = expected.find(capability);
          CHECK(
              t.hub().agents_with_capability(capability) ==
              (it == expected.end() ? std::vector<std::string>{} : it->second));
        }
      };
  index_is({});
  REQUIRE(t.hub().set_resume(alice, resume_with({"math"})).has_value());
  index_is({{"math", just_alice}});
  REQUIRE(
      t.hub().set_resume(alice, resume_with({"math", "policy"})).has_value());
  index_is({{"math", just_alice}, {"policy", just_alice}});
  REQUIRE(t.hub().set_resume(alice, resume_with({"policy"})).has_value());
  index_is({{"policy", just_alice}});
  t.restart();
  index_is({{"policy", just_alice}});

  // Registering with claims indexes them at once; id lists are sorted.
  const auto bob = t.add_agent("bob", resume_with({"debate"}));
  const auto carol = t.add_agent("carol", resume_with({"debate"}));
  index_is({{"policy", just_alice}, {"debate", sorted({bob, carol})}});
  t.restart();
  index_is({{"policy", just_alice}, {"debate", sorted({bob, carol})}});
}

TEST_CASE("REG-11 unregister prunes capability buckets") {
  TestHub t;
  const auto alice = t.add_agent("alice", resume_with({"debate"}));
  const auto bob = t.add_agent("bob", resume_with({"debate"}));
  CHECK(t.hub().agents_with_capability("debate") == sorted({alice, bob}));
  REQUIRE(t.hub().unregister(alice).has_value());
  CHECK(t.hub().agents_with_capability("debate") ==
        std::vector<std::string>{bob});
  REQUIRE(t.hub().unregister(bob).has_value());
  CHECK(t.hub().agents_with_capability("debate").empty());
  CHECK(t.hub().list_agents({.capability = "debate"}).empty());
  t.restart();
  CHECK(t.hub().agents_with_capability("debate").empty());
}

// --- REG-12 .. REG-15: observations ------------------------------------

TEST_CASE("REG-12 record_observation maintains observed stats") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  REQUIRE(t.hub()
              .record_observation(alice, "analysis", "completed", 420.0,
                                  std::nullopt)
              .has_value());
  REQUIRE(t.hub()
              .record_observation(alice, "analysis", "failed", std::nullopt,
                                  std::nullopt)
              .has_value());
  REQUIRE(t.hub()
              .record_observation(alice, "analysis", "expired", std::nullopt,
                                  std::nullopt)
              .has_value());
  const json expected = {{"n", 3},
                         {"completed", 1},
                         {"failed", 1},
                         {"expired", 1},
                         {"p50_latency_ms", 420.0}};
  CHECK(engine::to_json(*t.hub().get_resume(alice))["observed"]["analysis"] ==
        expected);
  CHECK(t.hub().get_resume(alice)->version == 4);
  t.restart();
  CHECK(engine::to_json(*t.hub().get_resume(alice))["observed"]["analysis"] ==
        expected);

  // Each observation is audited as resume_set, source "observed".
  const auto audited = audit_of(t, "resume_set");
  REQUIRE(audited.size() == 3);
  CHECK(audited[0] == json{{"at", kT0},
                           {"kind", "resume_set"},
                           {"source", "observed"},
                           {"agent_id", alice},
                           {"version", 2},
                           {"capability", "analysis"},
                           {"outcome", "completed"}});
  CHECK(audited[2]["outcome"] == "expired");
}

TEST_CASE("REG-12 a cancelled outcome counts only n") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  REQUIRE(t.hub()
              .record_observation(alice, "analysis", "cancelled", std::nullopt,
                                  std::nullopt)
              .has_value());
  CHECK(engine::to_json(*t.hub().get_resume(alice))["observed"]["analysis"] ==
        json{{"n", 1},
             {"completed", 0},
             {"failed", 0},
             {"expired", 0},
             {"p50_latency_ms", nullptr}});
}

TEST_CASE("REG-12 observations of an unregistered owner are ignored") {
  TestHub t;
  const auto before = t.hub().store().last_sequence();
  CHECK(t.hub()
            .record_observation("ghost", "analysis", "completed", 1.0,
                                std::nullopt)
            .has_value());
  CHECK(t.hub().store().last_sequence() == before);
}

TEST_CASE(
    "REG-13 observing an unclaimed capability makes the agent "
    "discoverable") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  REQUIRE(t.hub()
              .record_observation(alice, "emergent", "completed", std::nullopt,
                                  std::nullopt)
              .has_value());
  CHECK(t.hub().agents_with_capability("emergent") ==
        std::vector<std::string>{alice});
  CHECK(ids_of(t.hub().list_agents({.capability = "emergent"})) ==
        std::vector<std::string>{alice});
  CHECK(t.hub().get_resume(alice)->claimed_capabilities.empty());
  t.restart();
  CHECK(t.hub().agents_with_capability("emergent") ==
        std::vector<std::string>{alice});
}

TEST_CASE("REG-14 non-terminal outcomes are ignored") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto before = t.hub().store().last_sequence();
  REQUIRE(
      t.hub()
          .record_observation(alice, "analysis", "running", 10.0, std::nullopt)
          .has_value());
  CHECK(t.hub().get_resume(alice)->observed.empty());
  CHECK(t.hub().agents_with_capability("analysis").empty());
  CHECK(t.hub().store().last_sequence() == before);
}

TEST_CASE("REG-15 observations are deduplicated per owner and task id") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  auto observe = [&](const std::string& owner, std::string_view outcome,
                     std::string task) {
    REQUIRE(t.hub()
                .record_observation(owner, "math", outcome, std::nullopt,
                                    std::move(task))
                .has_value());
  };
  auto stats = [&](const std::string& owner) {
    return engine::to_json(*t.hub().get_resume(owner))["observed"]["math"];
  };
  observe(alice, "completed", "task-A");
  observe(alice, "completed", "task-A");
  CHECK(stats(alice)["n"] == 1);
  CHECK(stats(alice)["completed"] == 1);
  observe(alice, "failed", "task-B");
  CHECK(stats(alice)["n"] == 2);
  CHECK(stats(alice)["failed"] == 1);

  // The dedup memory is folded from the log: it survives a restart.
  t.restart();
  observe(alice, "completed", "task-A");
  CHECK(stats(alice)["n"] == 2);

  // Dedup is per (owner, task), so another agent reporting the id first
  // does not suppress the owner's own observation.
  const auto bob = t.add_agent("bob");
  observe(bob, "completed", "task-C");
  observe(alice, "completed", "task-C");
  CHECK(stats(bob)["n"] == 1);
  CHECK(stats(alice)["n"] == 3);
}

// --- REG-16, REG-17 ----------------------------------------------------

TEST_CASE("REG-16 resume examples append in order") {
  // AG2's add_example is client-side: read the resume, append, set_resume.
  TestHub t;
  const auto alice = t.add_agent("alice");
  CHECK(t.hub().get_resume(alice)->examples.empty());
  for (const char* title : {"reviewed PR #42", "triaged incident #7"}) {
    Resume resume = *t.hub().get_resume(alice);
    resume.examples.push_back({.title = title});
    REQUIRE(t.hub().set_resume(alice, resume).has_value());
  }
  auto titles = [&] {
    std::vector<std::string> out;
    const Resume resume = *t.hub().get_resume(alice);
    for (const auto& example : resume.examples) out.push_back(example.title);
    return out;
  };
  const std::vector<std::string> expected{"reviewed PR #42",
                                          "triaged incident #7"};
  CHECK(titles() == expected);
  t.restart();
  CHECK(titles() == expected);
}

TEST_CASE("REG-17 skill markdown lifecycle") {
  TestHub t;
  const std::string skill = "---\nname: alice\n---\n\n## What I do\nMath.\n";
  const auto alice = t.add_agent("alice", {}, std::nullopt, skill);
  const auto bob = t.add_agent("bob");
  CHECK(t.hub().get_skill(alice) == skill);
  CHECK(t.hub().get_skill(bob) == std::nullopt);
  t.restart();
  CHECK(t.hub().get_skill(alice) == skill);  // verbatim after restart
  CHECK(t.hub().get_skill(bob) == std::nullopt);

  REQUIRE(t.hub().set_skill(alice, "# v2").has_value());
  CHECK(t.hub().get_skill(alice) == "# v2");
  REQUIRE(t.hub().set_skill(alice, std::nullopt).has_value());
  CHECK(t.hub().get_skill(alice) == std::nullopt);
  t.restart();
  CHECK(t.hub().get_skill(alice) == std::nullopt);
  CHECK(t.ops().call("get_skill", {{"agent_id", alice}}) == json(nullptr));

  const auto audited = audit_of(t, "skill_set");
  REQUIRE(audited.size() == 2);
  CHECK(audited[0] == json{{"at", kT0},
                           {"kind", "skill_set"},
                           {"agent_id", alice},
                           {"removed", false}});
  CHECK(audited[1]["removed"] == true);
  CHECK(error_of(t.hub().set_skill("ghost", "x")).message ==
        "agent not registered: ghost");
}

// --- REG-20 .. REG-25 --------------------------------------------------

TEST_CASE("REG-20 the hub registers human participants") {
  // AG2's client refuses kind "human" in register() (use register_human)
  // and any non-human kind in register_human(); those are client
  // conventions. The hub itself accepts every kind of the closed set.
  TestHub t;
  Resume resume = resume_with({}, "reviews drafts");
  const auto reviewer =
      t.add_agent("reviewer", resume, std::nullopt, std::nullopt, "human");
  auto passport = t.hub().get_agent(reviewer);
  REQUIRE(passport.has_value());
  CHECK(passport->kind == "human");
  CHECK(engine::has_id_shape(*passport->agent_id));
  CHECK(t.hub().get_resume(reviewer)->summary == "reviews drafts");

  const auto plain =
      t.add_agent("second", {}, std::nullopt, std::nullopt, "human");
  CHECK(engine::to_json(*t.hub().get_resume(plain)) ==
        engine::to_json(Resume{}));

  // A second human with the same name is refused like any duplicate.
  auto again = t.hub().register_identity({.name = "reviewer", .kind = "human"},
                                         {}, std::nullopt, std::nullopt);
  CHECK(error_of(again).kind == ErrorKind::kProtocol);
  CHECK(contains(error_of(again).message, "already registered"));

  auto op = t.ops().call("register",
                         {{"passport", {{"name", "third"}, {"kind", "human"}}},
                          {"resume", json::object()}});
  REQUIRE(op.has_value());
  CHECK((*op)["kind"] == "human");
}

TEST_CASE("REG-21 identity kind is a closed set") {
  TestHub t;
  const auto before = t.hub().store().last_sequence();
  auto typo = t.hub().register_identity({.name = "alice", .kind = "huMAn"}, {},
                                        std::nullopt, std::nullopt);
  CHECK(error_of(typo).kind == ErrorKind::kInvalid);
  CHECK(error_of(typo).message ==
        "Passport.kind must be one of ('agent', 'human', 'remote_agent') or "
        "None; got 'huMAn'");
  CHECK(t.hub().store().last_sequence() == before);
  CHECK(t.hub().list_agents({}).empty());
  for (const char* kind : {"agent", "human", "remote_agent"}) {
    CAPTURE(kind);
    auto ok = t.hub().register_identity(
        {.name = std::string("as-") + kind, .kind = kind}, {}, std::nullopt,
        std::nullopt);
    CHECK(ok.has_value());
  }
}

TEST_CASE(
    "a remote_agent's owners are recorded with it and survive a "
    "restart") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto relay =
      t.hub().register_identity({.name = "relay", .kind = "remote_agent"}, {},
                                std::nullopt, std::nullopt, {bob, alice, bob});
  REQUIRE(relay.has_value());
  std::vector<std::string> owners{alice, bob};
  std::ranges::sort(owners);
  CHECK(t.hub().agent_owners(*relay->agent_id) == owners);
  t.restart();
  CHECK(t.hub().agent_owners(*relay->agent_id) == owners);
  CHECK(t.hub().agent_owners(alice).empty());
  CHECK(t.hub().agent_owners("ghost").empty());
  // Only a remote_agent has owners.
  const auto before = t.hub().store().last_sequence();
  auto plain = t.hub().register_identity({.name = "carol"}, {}, std::nullopt,
                                         std::nullopt, {alice});
  CHECK(error_of(plain).kind == ErrorKind::kInvalid);
  CHECK(error_of(plain).message ==
        "only a remote_agent is registered with owners");
  CHECK(t.hub().store().last_sequence() == before);
}

TEST_CASE("REG-22 an unknown auth scheme registers nothing") {
  TestHub t;
  engine::Passport passport{.name = "alice"};
  passport.auth.scheme = "jwt";
  const auto before = t.hub().store().last_sequence();
  auto refused =
      t.hub().register_identity(passport, {}, std::nullopt, std::nullopt);
  CHECK(error_of(refused).kind == ErrorKind::kAuthFailed);
  CHECK(error_of(refused).message == "unknown auth scheme: 'jwt'");
  CHECK(t.hub().store().last_sequence() == before);
  CHECK(t.hub().find_agent_id("alice") == std::nullopt);
  auto op = t.ops().call(
      "register",
      {{"passport", {{"name", "alice"}, {"auth", {{"scheme", "jwt"}}}}},
       {"resume", json::object()}});
  CHECK(engine::wire_code(error_of(op).kind) == "auth_failed");
}

TEST_CASE("REG-23 name resolution for display") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  CHECK(t.hub().name_for(alice) == "alice");
  CHECK(t.hub().name_for("does-not-exist") == "does-not-exist");
  CHECK(t.hub().name_for("does-not-exist", "unknown") == "unknown");
  CHECK(t.hub().name_for(alice, "unknown") == "alice");
  auto names = t.ops().call("names_for", {{"agent_ids", {alice, "nobody"}}});
  REQUIRE(names.has_value());
  CHECK(*names == json{{alice, "alice"}, {"nobody", "nobody"}});
}

TEST_CASE("REG-24 lookup accessors") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  CHECK(t.hub().find_agent_id("alice") == alice);
  CHECK(t.hub().find_agent_id("ghost") == std::nullopt);
  CHECK(engine::to_json(*t.hub().get_rule(alice)) == engine::to_json(Rule{}));
  const auto missing = error_of(t.hub().get_rule("never-registered"));
  CHECK(missing.kind == ErrorKind::kNotFound);
  CHECK(missing.message == "rule not found: never-registered");
  CHECK(t.ops().call("find_agent_id", {{"name", "ghost"}}) == json(nullptr));
  CHECK(t.ops().call("find_agent_id", {{"name", "alice"}}) == json(alice));
}

TEST_CASE("REG-25 set_rule persists and versions") {
  TestHub t;
  const auto bob = t.add_agent("bob");
  CHECK(t.hub().get_rule(bob)->limits.inbox_max_pending == 1000);  // AG2's
  Rule rule;
  rule.limits.inbox_max_pending = 5;
  rule.version = 99;  // ignored: the hub bumps the previous version
  REQUIRE(t.hub().set_rule(bob, rule).has_value());
  CHECK(t.hub().get_rule(bob)->limits.inbox_max_pending == 5);
  CHECK(t.hub().get_rule(bob)->version == 2);

  const auto log = identity_log(t);
  REQUIRE(log.size() == 2);
  CHECK(log[1]["what"] == "rule");
  CHECK(log[1]["value"]["limits"]["inbox"]["max_pending"] == 5);
  t.restart();
  CHECK(t.hub().get_rule(bob)->limits.inbox_max_pending == 5);
  CHECK(t.hub().get_rule(bob)->version == 2);

  CHECK(audit_of(t, "rule_set") == std::vector<json>{{{"at", kT0},
                                                      {"kind", "rule_set"},
                                                      {"agent_id", bob},
                                                      {"version", 2}}});
  const auto unknown = error_of(t.hub().set_rule("ghost", rule));
  CHECK(unknown.kind == ErrorKind::kNotFound);
  CHECK(unknown.message == "agent not registered: ghost");
}

// --- Area 1 at the hub -------------------------------------------------

TEST_CASE("ENV-03 a text envelope as the hub logs it") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  REQUIRE(
      t.say(channel->channel_id, alice, "hello", std::vector<std::string>{bob})
          .has_value());
  auto read = t.ops().call(
      "read_wal", {{"channel_id", channel->channel_id}, {"since", -1}});
  REQUIRE(read.has_value());
  REQUIRE(read->size() == 1);
  const json& text = (*read)[0];
  CHECK(text["event_type"] == "ag2.msg.text");
  CHECK(text["event_data"] == json{{"text", "hello"}});
  CHECK(text["audience"] == json{bob});
  CHECK(text["sender_id"] == alice);
  CHECK(text["priority"] == "normal");
  CHECK(text["depth"] == 0);
  CHECK(text["task_id"].is_null());
  CHECK_FALSE(text.contains("sequence"));  // Parley-only, never AG2-shaped
}

TEST_CASE("ENV-06 delivery follows the audience, the log keeps everything") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto carol = t.add_agent("carol");
  auto channel = t.open(alice, "discussion", {bob, carol});
  REQUIRE(channel.has_value());
  const auto& id = channel->channel_id;
  using Ids = std::vector<std::string>;
  auto texts = [&](const std::string& agent) {
    Ids out;
    for (const auto& envelope : t.inbox(agent)) {
      if (envelope.event_type == engine::event_type::kText) {
        out.push_back(envelope.envelope_id);
      }
    }
    return out;
  };
  // Round robin alice, bob, carol.
  auto to_bob = t.say(id, alice, "for bob only", Ids{bob});
  auto to_all = t.say(id, bob, "for everyone");
  auto to_self = t.say(id, carol, "for me and alice", Ids{carol, alice});
  REQUIRE(to_bob.has_value());
  REQUIRE(to_all.has_value());
  REQUIRE(to_self.has_value());

  // A list reaches exactly the listed ids, the sender too when listed;
  // null reaches every participant except the sender.
  CHECK(texts(alice) == Ids{*to_all, *to_self});
  CHECK(texts(bob) == Ids{*to_bob});
  CHECK(texts(carol) == Ids{*to_all, *to_self});

  // The log stores every envelope with its audience as posted.
  auto wal = t.wal(id);
  REQUIRE(wal.size() >= 3);
  const auto last = std::vector(wal.end() - 3, wal.end());
  CHECK(last[0].envelope_id == *to_bob);
  CHECK(last[0].audience == Ids{bob});
  CHECK(last[1].audience == std::nullopt);
  CHECK(last[2].audience == Ids{carol, alice});
}

TEST_CASE("ENV-06 listed ids that are not registered are dropped silently") {
  // The delivery set is the audience as listed; unknown ids get nothing
  // and do not fail the post. (Only a wire post must list participants
  // alone; the in-process hub delivers as listed.)
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  const auto eve = t.add_agent("eve");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  auto id = t.say(channel->channel_id, alice, "psst",
                  std::vector<std::string>{"ghost", bob, eve});
  REQUIRE(id.has_value());
  CHECK(t.inbox(bob).back().envelope_id == *id);
  CHECK(t.inbox(eve).back().envelope_id == *id);
  CHECK(t.inbox("ghost").empty());
  CHECK(t.wal(channel->channel_id).back().audience ==
        std::vector<std::string>{"ghost", bob, eve});
}

TEST_CASE("ENV-07 the hub stamps id and time at acceptance") {
  TestHub t;
  const auto alice = t.add_agent("alice");
  const auto bob = t.add_agent("bob");
  auto channel = t.open(alice, "conversation", {bob});
  REQUIRE(channel.has_value());
  t.clock().advance(std::chrono::seconds(90));

  engine::Envelope envelope;
  envelope.channel_id = channel->channel_id;
  envelope.sender_id = alice;
  envelope.event_type = std::string(engine::event_type::kText);
  envelope.event_data = engine::to_flex(json{{"text", "hi"}}).value();
  envelope.envelope_id = "client-chosen";
  envelope.created_at = "1999-01-01T00:00:00+00:00";
  auto id = t.hub().post_envelope(envelope);
  REQUIRE(id.has_value());
  CHECK(engine::has_id_shape(*id));
  const auto logged = t.wal(channel->channel_id).back();
  CHECK(logged.envelope_id == *id);
  CHECK(logged.created_at == "2026-01-01T00:01:30+00:00");

  // Same over the op layer, with the fields left empty.
  auto op =
      t.ops().call("post_envelope", {{"envelope",
                                      {{"channel_id", channel->channel_id},
                                       {"sender_id", bob},
                                       {"audience", nullptr},
                                       {"event_type", "ag2.msg.text"},
                                       {"event_data", {{"text", "hello"}}},
                                       {"envelope_id", ""},
                                       {"created_at", ""}}}});
  REQUIRE_MESSAGE(op.has_value(), testing::error_message(op));
  const auto second = t.wal(channel->channel_id).back();
  CHECK(*op == second.envelope_id);
  CHECK(second.created_at == "2026-01-01T00:01:30+00:00");
  CHECK(second.envelope_id > logged.envelope_id);  // strictly increasing
}

// --- Hello admission: the registered scheme, a claim object ------------

// A hub whose auth registry has "none" and "api_key" (alice's key: s3cret).
void with_api_keys(TestHub& t) {
  t.set_options([](engine::HubOptions& options) {
    auto auth = std::make_shared<engine::AuthRegistry>();
    auth->register_scheme("api_key",
                          std::make_shared<engine::ApiKeyAuth>(
                              engine::ApiKeyAuth::KeyMap{{"alice", "s3cret"}}));
    options.auth = std::move(auth);
  });
  t.restart();
}

std::string auth_message(const engine::Result<std::string>& result) {
  REQUIRE_FALSE(result.has_value());
  return wire_code_and_message(result.error());
}

TEST_CASE("authenticate admits a registered name with its own scheme") {
  TestHub t;
  with_api_keys(t);
  auto alice = t.hub().register_identity(
      {.name = "alice",
       .auth = {.scheme = "api_key", .claim = R"({"token":"s3cret"})"}},
      {}, {}, {});
  REQUIRE(alice.has_value());
  const auto bob = t.add_agent("bob");
  CHECK(t.hub().authenticate("alice", "api_key", R"({"token":"s3cret"})") ==
        *alice->agent_id);
  CHECK(t.hub().authenticate("bob", "none", "{}") == bob);
  CHECK(t.hub().authenticate("bob", "none", R"({"anything":1})") == bob);
}

TEST_CASE("authenticate refuses with AG2's codes and messages") {
  TestHub t;
  with_api_keys(t);
  REQUIRE(t.hub()
              .register_identity({.name = "alice",
                                  .auth = {.scheme = "api_key",
                                           .claim = R"({"token":"s3cret"})"}},
                                 {}, {}, {})
              .has_value());
  t.add_agent("bob");
  t.add_agent("relay", {}, std::nullopt, std::nullopt, "remote_agent");
  auto& hub = t.hub();
  CHECK(auth_message(hub.authenticate("carol", "none", "{}")) ==
        "not_found: unknown name: carol");
  CHECK(auth_message(hub.authenticate("bob", "none", "[1]")) ==
        "auth_failed: auth_claim must be a JSON object");
  CHECK(auth_message(hub.authenticate("bob", "none", "\"x\"")) ==
        "auth_failed: auth_claim must be a JSON object");
  CHECK(auth_message(hub.authenticate("bob", "kerberos", "{}")) ==
        "auth_failed: unknown auth scheme: 'kerberos'");
  CHECK(auth_message(hub.authenticate("alice", "none", "{}")) ==
        "auth_failed: auth scheme 'none' does not match 'alice''s registered "
        "scheme 'api_key'");
  CHECK(auth_message(
            hub.authenticate("alice", "api_key", R"({"token":"wrong"})")) ==
        "auth_failed: api_key mismatch for 'alice'");
  CHECK(auth_message(hub.authenticate("alice", "api_key", "{}")) ==
        "auth_failed: api_key claim missing required string field 'token'");
  CHECK(auth_message(hub.authenticate("relay", "none", "{}")) ==
        "auth_failed: remote agent 'relay' re-attaches only alongside its "
        "owner");
}

}  // namespace
}  // namespace parley
