// decode_hot_frame against the slow path it stands in for: whatever it
// takes it decodes exactly as decode_frame and the op layer's envelope
// parse do, and what the two parsers could read differently it leaves to
// them.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/flex_json.h"
#include "engine/json/python_json.h"
#include "engine/transport/hot_frames.h"
#include "tests/hot_frame_reference.h"

namespace parley {
namespace {

using nlohmann::json;
using transport::decode_hot_frame;
using transport::PostRequestFrame;
using transport::ReceiptFrame;

// `text` takes the hot path, and the slow path reads it the same.
void check_agrees(std::string_view text) {
  INFO(text);
  auto hot = decode_hot_frame(text);
  REQUIRE(hot);
  auto slow = testing::slow_hot_frame(text);
  REQUIRE(slow);
  CHECK(testing::hot_frame_difference(*hot, *slow) == "");
}

// Whatever takes the hot path reads the same on the slow path.
void check_consistent(std::string_view text) {
  auto hot = decode_hot_frame(text);
  if (!hot) return;
  INFO(text);
  auto slow = testing::slow_hot_frame(text);
  REQUIRE(slow);
  CHECK(testing::hot_frame_difference(*hot, *slow) == "");
}

constexpr std::string_view kFullPost =
    R"({"kind": "request", "op": "post_envelope", "request_id": "r-7", )"
    R"("params": {"envelope": {"sender_id": "a1", "channel_id": "c1", )"
    R"("event_type": "myapp.review", "audience": ["a2", "a3"], )"
    R"("event_data": {"z": [1, -2, 3.5, 1e3, true, false, null, "x"], )"
    R"("b": {"nested": {"k": "caf\u00e9 \"q\" \\ \/"}}, "a": 18446744073709551, )"
    R"("big": 9223372036854775808, "neg": -9223372036854775808, "": "empty key", )"
    R"("\u00e9t\u00e9": 0.1, "zero": 0, "ex": -0.0}, )"
    R"("envelope_id": "e1", "task_id": "t1", "causation_id": null, )"
    R"("trace_id": "tr", "priority": "urgent", "depth": -3, )"
    R"("idempotency_key": "k1", "created_at": "2026-11-05T10:00:00+00:00", )"
    R"("ttl_seconds": 60}}})";

TEST_CASE(
    "a post with every envelope field decodes as the op layer parses it") {
  check_agrees(kFullPost);
  auto hot = decode_hot_frame(kFullPost);
  const auto& post = std::get<PostRequestFrame>(*hot);
  CHECK(post.request_id == "r-7");
  CHECK(post.envelope->audience == std::vector<std::string>{"a2", "a3"});
  CHECK(post.envelope->ttl_seconds == 60);
  CHECK(engine::flex_to_json(post.envelope->event_data)["b"]["nested"]["k"] ==
        "caf\u00e9 \"q\" \\ /");
}

TEST_CASE(
    "a minimal post and a broadcast post decode as the op layer parses them") {
  check_agrees(
      R"({"request_id": "1", "op": "post_envelope", "params": {"envelope": )"
      R"({"channel_id": "c", "sender_id": "s", "audience": null, )"
      R"("event_type": "ag2.msg.text", "event_data": {"text": "hi"}}}, "kind": "request"})");
  check_agrees(
      R"({"request_id":"1","op":"post_envelope","params":{"envelope":)"
      R"({"channel_id":"c","sender_id":"s","audience":[],)"
      R"("event_type":"ag2.msg.text","event_data":{}}},"kind":"request"})");
}

TEST_CASE("a receipt decodes as decode_frame decodes it") {
  check_agrees(R"({"envelope_id": "e", "status": "ack", "recipient_id": "r", )"
               R"("channel_id": "c", "reason": "", "kind": "receipt"})");
  check_agrees(R"({"kind": "receipt", "status": "nack", "envelope_id": "e"})");
}

TEST_CASE("every post and receipt of AG2's wire trace takes the hot path") {
  std::ifstream trace(std::string(PARLEY_SOURCE_DIR) +
                      "/tests/golden/ag2-wire-trace.jsonl");
  REQUIRE(trace);
  int posts = 0;
  int receipts = 0;
  for (std::string line; std::getline(trace, line);) {
    const json entry = json::parse(line);
    if (entry["dir"] != "c->h") continue;
    const json& frame = entry["frame"];
    const bool post =
        frame["kind"] == "request" && frame["op"] == "post_envelope";
    const bool receipt = frame["kind"] == "receipt";
    if (!post && !receipt) continue;
    check_agrees(engine::dump_python(nlohmann::ordered_json(frame)));
    (post ? posts : receipts)++;
  }
  CHECK(posts > 0);
  CHECK(receipts > 0);
}

TEST_CASE("frames the two parsers could read differently take the slow path") {
  const std::string post_prefix =
      R"({"request_id": "1", "op": "post_envelope", "params": {"envelope": )";
  auto post = [&](std::string_view envelope_fields, std::string_view data) {
    return post_prefix + R"({"channel_id": "c", "sender_id": "s", )" +
           R"("audience": null, "event_type": "t", "event_data": )" +
           std::string(data) + std::string(envelope_fields) +
           R"(}}, "kind": "request"})";
  };
  const std::string deep = std::string(33, '[') + std::string(33, ']');
  const std::vector<std::string> slow_ones = {
      // Keys twice: nlohmann keeps the last.
      R"({"request_id": "1", "request_id": "2", "op": "post_envelope", "params": {"envelope": {}}, "kind": "request"})",
      post(R"(, "sender_id": "t")", "{}"),
      post("", R"({"a": 1, "a": 2})"),
      // Integer types the parsers give differently.
      post("", R"({"a": -0})"),
      post("", R"({"a": 123456789012345678901})"),
      post("", R"({"a": 1e400})"),
      // Lone surrogate escapes, raw control bytes in a string.
      post("", R"({"a": "\udc00"})"),
      post("", R"({"a": "\ud800"})"),
      post("", "{\"a\": \"tab\there\"}"),
      // What the strict parse refuses.
      post(R"(, "colour": "red")", "{}"),
      post(R"(, "priority": "high")", "{}"),
      post(R"(, "depth": 1.5)", "{}"),
      post(R"(, "depth": 9223372036854775808)", "{}"),
      post(R"(, "ttl_seconds": "60")", "{}"),
      post(R"(, "envelope_id": null)", "{}"),
      post("", "[]"),
      post("", R"({"a\u0000b": 1})"),
      post("", R"({"a": )" + deep + "}"),
      post_prefix + R"({"channel_id": "c"}}, "kind": "request"})",
      R"({"request_id": "1", "op": "post_envelope", "params": {"envelope": {}, "x": 1}, "kind": "request"})",
      R"({"request_id": "1", "op": "post_envelope", "kind": "request"})",
      R"({"request_id": 1, "op": "post_envelope", "params": {}, "kind": "request"})",
      // Other frames.
      R"({"request_id": "1", "op": "read_wal", "params": {"channel_id": "c"}, "kind": "request"})",
      R"({"name": "bob", "kind": "hello"})",
      R"({"envelope_id": "e", "kind": "receipt"})",
      R"({"envelope_id": "e", "status": 1, "kind": "receipt"})",
      R"({"envelope_id": "e", "status": "ack", "extra": "", "kind": "receipt"})",
      post("", R"({"text": ")" + std::string(70000, 'x') + R"("})"),
      "not json",
      post("", "{}") + " trailing",
  };
  for (const std::string& text : slow_ones) {
    INFO(text.substr(0, 300));
    CHECK_FALSE(decode_hot_frame(text));
  }
  // The plain neighbours of some of these still take the hot path.
  check_agrees(post("", R"({"a": -0.0, "b": -1, "c": 9300000000000000000})"));
  check_agrees(post("", R"({"a": "\u00e9\ue000\ud83d\ude00"})"));
  check_agrees(post("", "{\"a\":\t1,\n\"b\":\r[ ]}"));
  check_agrees(post(R"(, "depth": 2)", R"({"a": )" + std::string(31, '[') +
                                           std::string(31, ']') + "}"));
}

TEST_CASE("mutated posts and receipts decode the same on both paths") {
  const std::vector<std::string> bases = {
      std::string(kFullPost),
      R"({"envelope_id": "e", "status": "ack", "recipient_id": "r", "channel_id": "c", "reason": "", "kind": "receipt"})"};
  const std::string replacements = "\"\\{}[],:0-9eu. xnt";
  int tried = 0;
  for (const std::string& base : bases) {
    for (std::size_t i = 0; i < base.size(); ++i) {
      std::string removed = base;
      removed.erase(i, 1);
      check_consistent(removed);
      for (char c : replacements) {
        std::string changed = base;
        changed[i] = c;
        check_consistent(changed);
        ++tried;
      }
    }
  }
  CHECK(tried > 10000);
}

}  // namespace
}  // namespace parley
