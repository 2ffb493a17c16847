// Bad input through `parley exec` scripts, the op layer and `import-ag2`:
// every case a probe found to crash a command, run quadratically or slip
// through unchecked gets a clear error, and nothing is written.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/base/input_limits.h"
#include "engine/hub/hub.h"
#include "log/memory_log_store.h"
#include "tests/test_support.h"
#include "tools/script_runner.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A script runner on an in-memory store, with alice and bob registered and
// a conversation $c between them.
struct Script {
  std::shared_ptr<log::LogStore> store = log::make_memory_log_store();
  std::unique_ptr<engine::ScriptRunner> runner;

  Script() {
    auto started = engine::ScriptRunner::start(
        [this]() -> engine::Result<std::shared_ptr<log::LogStore>> {
          return store;
        });
    REQUIRE(started.has_value());
    runner = std::move(*started);
    for (const char* name : {"alice", "bob"}) {
      ok({{"op", "register"},
          {"params",
           {{"passport", {{"name", name}}}, {"resume", json::object()}}},
          {"as", name}});
    }
    ok({{"op", "create_channel"},
        {"params",
         {{"creator_id", "$alice"},
          {"manifest_type", "conversation"},
          {"participants", {"$bob"}}}},
        {"as", "c"}});
  }

  json line(std::string_view text) {
    auto output = runner->run_line(text);
    REQUIRE(output.has_value());
    return json::parse(*output);
  }
  json run(const json& request) { return line(request.dump()); }
  json ok(const json& request) {
    json out = run(request);
    REQUIRE_MESSAGE(out["ok"] == true, out.dump());
    return out["result"];
  }
  // Runs `request`, which must fail with `code` and a message containing
  // `words`, writing nothing.
  void refused(const json& request, std::string_view words,
               std::string_view code = "error") {
    const std::uint64_t before = store->last_sequence();
    json out = run(request);
    CHECK_MESSAGE(out["ok"] == false, out.dump());
    CHECK(out["error_code"] == code);
    CHECK_MESSAGE(out["error_message"].get<std::string>().find(words) !=
                      std::string::npos,
                  out.dump());
    CHECK(store->last_sequence() == before);
  }
};

json post(json envelope_fields) {
  json envelope = {{"channel_id", "$c"},
                   {"sender_id", "$alice"},
                   {"audience", nullptr},
                   {"event_type", "ag2.msg.text"},
                   {"event_data", {{"text", "hi"}}}};
  for (auto& [key, value] : envelope_fields.items()) envelope[key] = value;
  return {{"op", "post_envelope"}, {"params", {{"envelope", envelope}}}};
}

// `depth` nested arrays around 0, as JSON text.
std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + "0" + std::string(depth, ']');
}

TEST_CASE("an invitee mode that is not a string is an error line") {
  Script s;
  for (const json& mode : {json(5), json(nullptr), json::array()}) {
    s.refused(
        {{"op", "invitee"}, {"params", {{"agent_id", "$bob"}, {"mode", mode}}}},
        "'mode' must be a string");
  }
}

TEST_CASE("script params that are not an object are an error line") {
  Script s;
  s.refused({{"op", "sweep"}, {"params", 5}}, "'params' must be an object");
  s.refused({{"op", "state"}, {"params", "c"}}, "'params' must be an object");
}

TEST_CASE("a script line nested 100,000 deep is refused at parse") {
  Script s;
  const std::string deep = nested_arrays(100'000);
  json out =
      s.line(R"({"op": "post_envelope", "params": {"x": )" + deep + "}}");
  CHECK(out["ok"] == false);
  CHECK(out["error_message"].get<std::string>().find(
            "nests deeper than 64 levels") != std::string::npos);
  out = s.line(R"({"op": "no_such_op", "params": {"x": )" + deep + "}}");
  CHECK(out["ok"] == false);
}

TEST_CASE(
    "event_data nested deeper than stored values may is refused "
    "naming the limit") {
  Script s;
  json deep = 0;
  for (int i = 0; i < 40; ++i) deep = json::array({deep});
  s.refused(post({{"event_data", {{"text", "hi"}, {"deep", deep}}}}),
            "at most 32 levels");
  json shallow = 0;
  for (int i = 0; i < 30; ++i) shallow = json::array({shallow});
  s.ok(post({{"event_data", {{"text", "hi"}, {"deep", shallow}}}}));
}

TEST_CASE("substituting names into a deep line is linear") {
  // 60 levels, each an object holding $alice: every string is replaced
  // once, and the line runs.
  Script s;
  json data = {{"who", "$alice"}};
  for (int i = 0; i < 28; ++i) data = {{"who", "$alice"}, {"in", data}};
  json id = s.ok(post({{"event_data", {{"text", "hi"}, {"tree", data}}}}));
  CHECK(id.is_string());
}

TEST_CASE("negative envelope depth and ttl_seconds are refused") {
  Script s;
  s.refused(post({{"depth", -1}}), "'depth' must not be negative");
  s.refused(post({{"depth", std::numeric_limits<std::int64_t>::min()}}),
            "'depth' must not be negative");
  s.refused(post({{"ttl_seconds", -5}}), "'ttl_seconds' must not be negative");
}

TEST_CASE("a negative or absurd channel ttl is refused") {
  Script s;
  const std::pair<json, std::string_view> cases[] = {
      {"-1h", "ttl must not be negative, got -3600 seconds ('-1h')"},
      {-5, "ttl must not be negative, got -5 seconds"},
      {"1000000d", "ttl must be at most 3155760000 seconds (100 years)"},
      {"9999999999999999d", "duration out of range: '9999999999999999d'"}};
  for (const auto& item : cases) {
    // Not bindings: a lambda captures them, which clang 14 cannot.
    const auto& ttl = item.first;
    const auto& words = item.second;
    CAPTURE(ttl.dump());
    s.refused({{"op", "create_channel"},
               {"params",
                {{"creator_id", "$alice"},
                 {"manifest_type", "conversation"},
                 {"participants", {"$bob"}},
                 {"ttl", ttl}}}},
              words);
  }
}

TEST_CASE("the script clock stays within years 1-9999") {
  Script s;
  for (double seconds : {1e300, -1e300, 1e12}) {
    s.refused({{"op", "clock.advance"}, {"params", {{"seconds", seconds}}}},
              "clock.advance");
  }
  s.refused({{"op", "clock.advance"}, {"params", {{"seconds", -3e9 * 100}}}},
            "clock.advance");
  for (const char* at :
       {"2026-01-01T00:00:00+99:99", "2026-01-01T00:00:00+24:00",
        "0000-01-01T00:00:00+00:00", "0001-01-01T00:00:00+01:00"}) {
    s.refused({{"op", "clock.set"}, {"params", {{"at", at}}}}, "clock.set");
  }
  s.ok(
      {{"op", "clock.set"}, {"params", {{"at", "2026-01-01T00:00:00+23:59"}}}});
}

TEST_CASE("names, keys, checkpoints and audit records have size limits") {
  Script s;
  s.refused({{"op", "register"},
             {"params",
              {{"passport", {{"name", std::string(10 << 20, 'n')}}},
               {"resume", json::object()}}}},
            "script line: 10485");
  // Over the 1 MiB a stored value may hold, under the 8 MiB a line may.
  const std::string huge(2 << 20, 'x');
  const std::string long_name(engine::kMaxNameBytes + 1, 'n');
  s.refused(
      {{"op", "register"},
       {"params",
        {{"passport", {{"name", long_name}}}, {"resume", json::object()}}}},
      "the limit is 256");
  s.refused(post({{"idempotency_key", long_name}}),
            "idempotency_key is 257 bytes");
  s.refused(post({{"event_type", long_name}}), "event_type is 257 bytes");
  s.refused({{"op", "checkpoint_task"},
             {"params", {{"task_id", "t1"}, {"state", {{"blob", huge}}}}}},
            "checkpoint state");
  s.refused({{"op", "append_audit"},
             {"params",
              {{"record", {{"at", "now"}, {"kind", "note"}, {"text", huge}}}}}},
            "audit record");
  s.refused({{"op", "set_skill"},
             {"params", {{"agent_id", "$alice"}, {"skill_md", huge}}}},
            "skill_md");
}

TEST_CASE("stored JSON with a NUL in a key or nested too deep is refused") {
  // Such values pass the parse but cannot be stored as FlexBuffers; a
  // channel created with them once crashed the hub (found by fuzz_ops).
  Script s;
  const std::string nul_key("a\0b", 3);
  const json bad = {{nul_key, 1}};
  // knobs {"x": deep} nest 32 levels, one more in each invite.
  json deep = 0;
  for (std::size_t i = 1; i < engine::kMaxStoredJsonDepth; ++i) {
    deep = json::array({deep});
  }
  const auto channel = [](json extra) {
    json params = {{"creator_id", "$alice"},
                   {"manifest_type", "conversation"},
                   {"participants", {"$bob"}}};
    params.update(extra);
    return json{{"op", "create_channel"}, {"params", params}};
  };
  s.refused(channel({{"knobs", {{"x", bad}}}}),
            "knobs: JSON object keys must not contain NUL characters");
  s.refused(channel({{"labels", {{nul_key, "x"}}}}),
            "labels: JSON object keys must not contain NUL characters");
  s.refused(channel({{"knobs", {{"x", deep}}}}),
            "knobs nests deeper than 31 levels");
  // Over the op layer a passport's cost is a strict object; in-process it
  // is JSON text.
  auto hub = engine::Hub::open({.store = log::make_memory_log_store()});
  REQUIRE(hub.has_value());
  auto carol = (*hub)->register_identity(
      {.name = "carol", .cost = R"({"x":{"a\u0000b":1}})"}, {}, {}, {});
  REQUIRE_FALSE(carol.has_value());
  CHECK(carol.error().message ==
        "passport field 'cost': JSON object keys must not contain NUL "
        "characters");

  const json task = {{"task_id", "t1"},
                     {"owner_id", "$alice"},
                     {"spec", {{"title", "count"}}},
                     {"state", "running"},
                     {"created_at", "2026-01-01T00:00:00+00:00"}};
  json with_bad_payload = task;
  with_bad_payload["spec"]["payload"] = bad;
  s.refused(
      {{"op", "observe_task"}, {"params", {{"metadata", with_bad_payload}}}},
      "must not contain NUL");
  s.ok({{"op", "observe_task"}, {"params", {{"metadata", task}}}});
  s.refused({{"op", "update_task"},
             {"params", {{"task_id", "t1"}, {"progress", bad}}}},
            "must not contain NUL");
  s.refused({{"op", "update_task"},
             {"params", {{"task_id", "t1"}, {"result", {{"nested", bad}}}}}},
            "must not contain NUL");
}

TEST_CASE("text that is not valid UTF-8 never enters the log") {
  CHECK(engine::is_valid_utf8("plain, \xc3\xa9t\xc3\xa9, \xf0\x9f\x98\x80"));
  for (std::string_view bad : {"\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80",
                               "\xf4\x90\x80\x80", "ok\xe2\x82"}) {
    CHECK_FALSE(engine::is_valid_utf8(bad));
  }
  auto store = log::make_memory_log_store();
  auto hub = engine::Hub::open({.store = std::move(store)});
  REQUIRE(hub.has_value());
  auto refused = (*hub)->register_identity({.name = "carol"}, {},
                                           std::string("skill \xff\xfe"), {});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("not valid UTF-8") != std::string::npos);
  CHECK((*hub)->store().last_sequence() == 0);
}

}  // namespace
}  // namespace parley
