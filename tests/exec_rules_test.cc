// Rules, idempotent posts, the audit log and health through `parley exec`
// scripts (tools/script_runner.h), with a restart in the middle.
#include <doctest/doctest.h>

#include "log/rocksdb_log_store.h"
#include "tests/test_support.h"
#include "tools/script_runner.h"

namespace parley {
namespace {

using nlohmann::json;

struct Script {
  testing::ScratchDir data;
  std::unique_ptr<engine::ScriptRunner> runner;

  Script() {
    auto started = engine::ScriptRunner::start(
        [this]() -> engine::Result<std::shared_ptr<log::LogStore>> {
          auto opened = log::open_rocksdb_log_store(
              data.path() / "store", {.durability = log::Durability::kAsync});
          REQUIRE(opened.has_value());
          return std::shared_ptr<log::LogStore>(std::move(opened->store));
        });
    REQUIRE(started.has_value());
    runner = std::move(*started);
  }

  json run(const json& line) {
    auto output = runner->run_line(line.dump());
    REQUIRE(output.has_value());
    return json::parse(*output);
  }
  json ok(const json& line) {
    json out = run(line);
    REQUIRE_MESSAGE(out["ok"] == true, out.dump());
    return out["result"];
  }
};

json text_post(std::string_view text, std::optional<std::string> key) {
  json envelope = {{"channel_id", "$c"},
                   {"sender_id", "$alice"},
                   {"audience", nullptr},
                   {"event_type", "ag2.msg.text"},
                   {"event_data", {{"text", text}}}};
  if (key) envelope["idempotency_key"] = *key;
  return {{"op", "post_envelope"}, {"params", {{"envelope", envelope}}}};
}

TEST_CASE(
    "exec: rate limit, idempotent retries and health across a "
    "restart") {
  Script s;
  s.ok({{"op", "register"},
        {"params",
         {{"passport", {{"name", "alice"}}},
          {"resume", json::object()},
          {"rule",
           {{"limits", {{"rate", {{"per_minute", 60}, {"burst", 1}}}}}}}}},
        {"as", "alice"}});
  s.ok({{"op", "register"},
        {"params",
         {{"passport", {{"name", "bob"}}}, {"resume", json::object()}}},
        {"as", "bob"}});
  s.ok({{"op", "create_channel"},
        {"params",
         {{"creator_id", "$alice"},
          {"manifest_type", "conversation"},
          {"participants", {"$bob"}}}},
        {"as", "c"}});
  const json first = s.ok(text_post("hello", "k-1"));
  CHECK(s.ok(text_post("hello", "k-1")) == first);
  json limited = s.run(text_post("again", std::nullopt));
  CHECK(limited["error_code"] == "access_denied");
  CHECK(limited["error_message"] ==
        "sender 'alice' exceeded rate limit (60/min, burst 1)");
  json conflict = s.run(text_post("other", "k-1"));
  CHECK(conflict["error_code"] == "error");

  s.ok({{"op", "restart"}});
  CHECK(s.ok(text_post("hello", "k-1")) == first);
  s.ok(text_post("after restart", std::nullopt));
  CHECK(s.run(text_post("too fast", std::nullopt))["error_code"] ==
        "access_denied");
  s.ok({{"op", "clock.advance"}, {"params", {{"seconds", 1}}}});
  s.ok(text_post("on time", std::nullopt));

  const json health = s.ok({{"op", "health"}});
  CHECK(health["registered_agents"] == 2);
  CHECK(health["active_channels"] == 1);
  CHECK(health["channels_by_state"]["active"] == 1);
  const json wal =
      s.ok({{"op", "read_wal"}, {"params", {{"channel_id", "$c"}}}});
  CHECK(wal.size() == 6);  // invite, ack, opened and three texts
}

TEST_CASE("exec: tenant audit records and bad input") {
  Script s;
  s.ok({{"op", "append_audit"},
        {"params",
         {{"record",
           {{"at", "2026-01-01T00:00:00"}, {"kind", "test"}, {"n", 1}}}}}});
  json refused = s.run(
      {{"op", "append_audit"}, {"params", {{"record", {{"kind", "test"}}}}}});
  CHECK(refused["ok"] == false);
  CHECK(refused["error_code"] == "error");
  s.ok({{"op", "restart"}});
  CHECK(s.ok({{"op", "read_audit"}}) ==
        json::array(
            {{{"at", "2026-01-01T00:00:00"}, {"kind", "test"}, {"n", 1}}}));
  CHECK(s.run({{"op", "health"}, {"params", {{"x", 1}}}})["error_code"] ==
        "error");
}

}  // namespace
}  // namespace parley
