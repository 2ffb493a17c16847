// The frame codec and the wire key order, without sockets.
#include <doctest/doctest.h>

#include <variant>

#include "engine/base/flex_json.h"
#include "engine/json/python_json.h"
#include "engine/json/records_json.h"
#include "engine/transport/frame_codec.h"
#include "engine/transport/receipt_coalescer.h"
#include "engine/transport/wire_order.h"

namespace parley {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using namespace transport;

TEST_CASE("a request decodes with its params, defaults fill absent keys") {
  auto frame = decode_frame(
      R"({"request_id": "r1", "op": "get_agent", "params": {"name_or_id": "a"}, "kind": "request"})");
  auto* request = std::get_if<RequestFrame>(&frame);
  REQUIRE(request);
  CHECK(request->request_id == "r1");
  CHECK(request->op == "get_agent");
  CHECK(request->params == json{{"name_or_id", "a"}});
  auto bare =
      decode_frame(R"({"kind": "request", "request_id": "r", "op": "x"})");
  REQUIRE(std::holds_alternative<RequestFrame>(bare));
  CHECK(std::get<RequestFrame>(bare).params == json::object());
}

TEST_CASE("a hello decodes with AG2's defaults") {
  auto frame = decode_frame(R"({"name": "bob", "kind": "hello"})");
  auto* hello = std::get_if<HelloFrame>(&frame);
  REQUIRE(hello);
  CHECK(hello->name == "bob");
  CHECK(hello->auth_scheme == "none");
  CHECK(hello->auth_claim == "{}");
  CHECK_FALSE(hello->since_envelope_id.has_value());
  auto with = decode_frame(
      R"({"name": "bob", "auth_scheme": "api_key", "auth_claim": {"token": "t"}, "since_envelope_id": "", "kind": "hello"})");
  REQUIRE(std::holds_alternative<HelloFrame>(with));
  CHECK(std::get<HelloFrame>(with).auth_claim == R"({"token":"t"})");
  CHECK(std::get<HelloFrame>(with).since_envelope_id == "");
}

TEST_CASE("a receipt decodes every field") {
  auto frame = decode_frame(
      R"({"envelope_id": "e", "status": "ack", "recipient_id": "r", "channel_id": "c", "reason": "", "kind": "receipt"})");
  auto* receipt = std::get_if<ReceiptFrame>(&frame);
  REQUIRE(receipt);
  CHECK(receipt->envelope_id == "e");
  CHECK(receipt->status == "ack");
  CHECK(receipt->recipient_id == "r");
  CHECK(receipt->channel_id == "c");
}

TEST_CASE(
    "unknown kinds, extra keys and missing keys are skipped, naming "
    "why") {
  auto why = [](std::string_view text) {
    auto frame = decode_frame(text);
    REQUIRE(std::holds_alternative<SkippedFrame>(frame));
    return std::get<SkippedFrame>(frame).why;
  };
  CHECK(why("nope") == "not valid JSON");
  CHECK(why("3") == "not a JSON object");
  CHECK(why(R"({"op": "x"})") == "no string 'kind'");
  CHECK(why(R"({"kind": "subscribe"})") == "unknown kind 'subscribe'");
  CHECK(why(R"({"kind": "request", "request_id": "r", "op": "x", "x": 1})") ==
        "request frame has unexpected key 'x'");
  CHECK(why(R"({"kind": "request", "op": "x"})") ==
        "request frame is missing required key 'request_id'");
  CHECK(why(R"({"kind": "notify", "envelope": {}})") ==
        "a notify frame is sent by the hub, not to it");
}

// Found by fuzz_frames' regression input: a hello whose auth_claim nested
// 100,000 levels deep overflowed the stack when re-serialized (a frame of
// 200 KB, well under max_frame_bytes, crashed `parley serve`).
TEST_CASE("a frame nested deeper than the JSON depth limit is skipped") {
  const std::size_t depth = 100000;
  const std::string claim = std::string(depth, '[') + std::string(depth, ']');
  auto frame = decode_frame(R"({"kind": "hello", "name": "a", "auth_claim": )" +
                            claim + "}");
  REQUIRE(std::holds_alternative<SkippedFrame>(frame));
  CHECK(std::get<SkippedFrame>(frame).why == "nests deeper than 64 levels");
  // 64 levels still decode.
  const std::string deepest = std::string(63, '[') + std::string(63, ']');
  CHECK(std::holds_alternative<HelloFrame>(decode_frame(
      R"({"kind": "hello", "name": "a", "auth_claim": )" + deepest + "}")));
}

TEST_CASE("outbound frames are byte for byte AG2's json.dumps") {
  CHECK(
      encode_welcome("e1", "2026-01-01T00:00:00+00:00") ==
      R"({"endpoint_id": "e1", "hub_time": "2026-01-01T00:00:00+00:00", "kind": "welcome"})");
  CHECK(
      encode_failure("r1", "not_found", "agent not found: x") ==
      R"({"request_id": "r1", "ok": false, "result": null, "error_code": "not_found", "error_message": "agent not found: x", "kind": "response"})");
  CHECK(
      encode_response("r2", ordered_json("caf\u00e9")) ==
      R"({"request_id": "r2", "ok": true, "result": "caf\u00e9", "error_code": "", "error_message": "", "kind": "response"})");
  CHECK(
      encode_error("auth_failed", "no") ==
      R"({"code": "auth_failed", "message": "no", "envelope_id": null, "kind": "error"})");
  CHECK(encode_pong() == R"({"kind": "pong"})");
  engine::Envelope envelope;
  envelope.channel_id = "c";
  envelope.sender_id = "s";
  envelope.event_type = "ag2.msg.text";
  envelope.event_data = engine::to_flex(json{{"text", "hi"}}).value();
  envelope.envelope_id = "e";
  envelope.created_at = "2026-01-01T00:00:00+00:00";
  CHECK(
      encode_notify(envelope, "r") ==
      R"({"envelope": {"channel_id": "c", "sender_id": "s", "audience": null, "event_type": "ag2.msg.text", "event_data": {"text": "hi"}, "envelope_id": "e", "task_id": null, "causation_id": null, "trace_id": null, "priority": "normal", "depth": 0, "idempotency_key": null, "created_at": "2026-01-01T00:00:00+00:00", "ttl_seconds": null}, "recipient_id": "r", "kind": "notify"})");
}

TEST_CASE("a notify frame written directly equals the JSON tree's dump") {
  engine::Envelope envelope;
  envelope.channel_id = "ch\"1";
  envelope.sender_id = "caf\xc3\xa9";
  envelope.audience = std::vector<std::string>{"a", "\xf0\x9f\x98\x80"};
  envelope.event_type = "ag2.msg.text";
  envelope.event_data =
      engine::to_flex(json::parse(R"({"z": [1, -2, 18446744073709551615,
           2.5, 1e16, 0.0001, true, null, {"k": "\n\t\u007f"}],
           "a": {}, "m": []})"))
          .value();
  envelope.envelope_id = "e";
  envelope.task_id = "t";
  envelope.idempotency_key = "k";
  envelope.depth = -3;
  envelope.created_at = "2026-01-01T00:00:00.000001+00:00";
  envelope.ttl_seconds = 60;
  ordered_json tree = ordered_json::object();
  tree["envelope"] = engine::to_ordered_json(envelope);
  tree["recipient_id"] = "r\xff";  // not UTF-8: Python's surrogateescape
  tree["kind"] = "notify";
  const std::string frame = encode_notify(envelope, "r\xff");
  CHECK(frame.find(R"("recipient_id": "r\udcff")") != std::string::npos);
  tree["recipient_id"] = "r";
  CHECK(encode_notify(envelope, "r") == engine::dump_python(tree));
}

TEST_CASE(
    "acks held while a batch is written keep the greatest id per channel") {
  ReceiptCoalescer receipts;
  auto first = receipts.add({"bob", "c1", "e1"});
  REQUIRE(first.size() == 1);
  CHECK(first[0].envelope_id == "e1");
  CHECK(receipts.add({"bob", "c1", "e3"}).empty());
  CHECK(receipts.add({"bob", "c1", "e2"}).empty());
  CHECK(receipts.add({"bob", "c2", "e9"}).empty());
  auto next = receipts.batch_done();
  REQUIRE(next.size() == 2);
  CHECK(next[0].channel_id == "c1");
  CHECK(next[0].envelope_id == "e3");
  CHECK(next[1].channel_id == "c2");
  CHECK(next[1].envelope_id == "e9");
  CHECK(receipts.batch_done().empty());
  // Nothing in flight: the next ack is written at once.
  CHECK(receipts.add({"bob", "c1", "e4"}).size() == 1);
}

TEST_CASE("a request takes the held acks so they are written before it") {
  ReceiptCoalescer receipts;
  REQUIRE(receipts.add({"bob", "c1", "e1"}).size() == 1);
  CHECK(receipts.add({"bob", "c1", "e2"}).empty());
  auto held = receipts.take_held();
  REQUIRE(held.size() == 1);
  CHECK(held[0].envelope_id == "e2");
  CHECK(receipts.take_held().empty());
  CHECK(receipts.batch_done().empty());  // the first batch; one more out
  CHECK(receipts.batch_done().empty());  // the held batch
  CHECK(receipts.add({"bob", "c1", "e5"}).size() == 1);
}

TEST_CASE(
    "wire_result puts every record of a result in AG2's declaration "
    "order, as the engine's ordered writers do") {
  engine::Passport passport{.name = "alice"};
  passport.cost =
      R"({"input_per_mtok":1.5,"output_per_mtok":null,"latency_tier":"fast"})";
  passport.agent_id = "a";
  CHECK(wire_result("get_agent", engine::to_json(passport)).dump() ==
        engine::to_ordered_json(passport).dump());
  CHECK(wire_result("list_agents", json::array({engine::to_json(passport)}))
            .dump() ==
        ordered_json::array({engine::to_ordered_json(passport)}).dump());

  engine::Resume resume;
  resume.claimed_capabilities = {"math"};
  resume.examples.push_back({.title = "t", .outcome = "ok"});
  resume.observed["math"] = {.n = 2, .completed = 1, .p50_latency_ms = 3.0};
  CHECK(wire_result("get_resume", engine::to_json(resume)).dump() ==
        engine::to_ordered_json(resume).dump());
  CHECK(wire_result("get_rule", engine::to_json(engine::Rule{})).dump() ==
        engine::to_ordered_json(engine::Rule{}).dump());

  engine::ChannelMetadata metadata;
  metadata.channel_id = "c";
  metadata.manifest.type = "workflow";
  metadata.manifest.knobs_schema = {{"graph", "dict"}};
  metadata.manifest.expectations.push_back(
      {.name = "x", .on_violation = "warn", .params = R"({"a":2,"b":1})"});
  metadata.participants.push_back({.agent_id = "a", .role = "initiator"});
  metadata.knobs = R"({"a":{"b":3,"y":2},"z":1})";
  // Free-form objects keep the (sorted) order the op layer gives them.
  CHECK(wire_result("get_channel", engine::to_json(metadata)).dump() ==
        engine::to_ordered_json(metadata).dump());
  const auto ordered = wire_result("create_channel", engine::to_json(metadata));
  std::vector<std::string> keys;
  for (const auto& [key, value] : ordered.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{
                    "channel_id", "manifest", "creator_id", "participants",
                    "state", "created_at", "expires_at", "closed_at",
                    "close_reason", "parent_channel_id", "knobs", "labels",
                    "required_acks", "pending_acks", "rejected_by"});
  CHECK(ordered["manifest"].begin().key() == "type");
  CHECK(ordered["participants"][0].begin().key() == "agent_id");

  engine::Envelope envelope;
  envelope.channel_id = "c";
  envelope.event_data = engine::to_flex(json{{"b", 1}, {"a", 2}}).value();
  CHECK(wire_result("read_wal", json::array({engine::to_json(envelope)}))
            .dump() ==
        ordered_json::array({engine::to_ordered_json(envelope)}).dump());

  json task = {{"channel_id", nullptr},
               {"error", ""},
               {"owner_id", "o"},
               {"spec",
                {{"title", "t"},
                 {"capability", nullptr},
                 {"description", ""},
                 {"payload", json::object()}}},
               {"task_id", "t1"},
               {"state", "running"}};
  const auto task_keys = wire_result("get_task", task);
  CHECK(
      task_keys.dump() ==
      R"({"task_id":"t1","owner_id":"o","spec":{"title":"t","description":"","payload":{},"capability":null},"state":"running","error":"","channel_id":null})");
  CHECK(wire_result("names_for", json{{"b", "x"}, {"a", "y"}}).dump() ==
        R"({"a":"y","b":"x"})");
  CHECK(wire_result("post_envelope", json("id")).dump() == R"("id")");
}

}  // namespace
}  // namespace parley
