// parley-bench-frames: what the frames of a post cost `parley serve`, one
// thread, no I/O. Decoding: the JSON tree path (nlohmann: decode_frame,
// then for a post the op layer's envelope parse) against the hot path
// (simdjson straight into the typed frame, engine/transport/hot_frames.h),
// on the two frames every post brings in: its post_envelope request (an
// ag2.msg.text of --text-bytes, as AG2's client writes it) and the
// recipient's receipt. Encoding: the notify frame that carries the posted
// envelope to its recipient.
//
// Each loop runs kRuns times over --num frames and the best run counts;
// every result is checked, so a path that does nothing cannot look fast.
// Output: db_bench-style lines (MB/s over the frame's bytes) and a JSON
// summary.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <variant>

#include "benchmarks/bench_support.h"
#include "engine/json/records_json.h"
#include "engine/transport/frame_codec.h"
#include "engine/transport/hot_frames.h"

namespace parley::bench {
namespace {

constexpr int kRuns = 3;

struct Options {
  std::uint64_t num = 200000;
  std::size_t text_bytes = 300;
  std::string json_path;
};

std::string post_frame(std::size_t text_bytes) {
  return R"({"request_id": "18ea411700957730a199e1117e3e8c13", "op": "post_envelope", )"
         R"("params": {"envelope": {"channel_id": "5f0c8d4e6b7a49c1a2d3e4f5a6b7c8d9", )"
         R"("sender_id": "0a1b2c3d4e5f46a7b8c9d0e1f2a3b4c5", "audience": null, )"
         R"("event_type": "ag2.msg.text", "event_data": {"text": ")" +
         chat_text(text_bytes, 7) +
         R"("}, "causation_id": null}}, "kind": "request"})";
}

constexpr std::string_view kReceipt =
    R"({"envelope_id": "9d8c7b6a5f4e43d2c1b0a9f8e7d6c5b4", "status": "ack", )"
    R"("recipient_id": "0a1b2c3d4e5f46a7b8c9d0e1f2a3b4c5", )"
    R"("channel_id": "5f0c8d4e6b7a49c1a2d3e4f5a6b7c8d9", "reason": "", "kind": "receipt"})";

// The slow path's post: decode_frame, then the op layer's envelope parse.
bool tree_post(std::string_view text) {
  transport::InboundFrame frame = transport::decode_frame(text);
  auto* request = std::get_if<transport::RequestFrame>(&frame);
  if (!request) return false;
  auto envelope = engine::envelope_from_json(request->params["envelope"]);
  return envelope && !envelope->event_data.empty();
}

bool tree_receipt(std::string_view text) {
  transport::InboundFrame frame = transport::decode_frame(text);
  auto* receipt = std::get_if<transport::ReceiptFrame>(&frame);
  return receipt && receipt->status == "ack";
}

bool hot_post(std::string_view text) {
  auto frame = transport::decode_hot_frame(text);
  return frame && std::holds_alternative<transport::PostRequestFrame>(*frame);
}

bool hot_receipt(std::string_view text) {
  auto frame = transport::decode_hot_frame(text);
  return frame && std::holds_alternative<transport::ReceiptFrame>(*frame);
}

// `frame` returns whether its frame came out right.
template <typename Frame>
Measurement time_frames(const std::string& name, std::size_t frame_bytes,
                        std::uint64_t num, Frame frame) {
  double best = 0;
  for (int run = 0; run < kRuns; ++run) {
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < num; ++i) {
      if (!frame()) throw BenchmarkError(name + ": a frame came out wrong");
    }
    const double seconds = seconds_since(start);
    if (run == 0 || seconds < best) best = seconds;
  }
  return Measurement{.name = name,
                     .ops = num,
                     .seconds = best,
                     .bytes_per_op = static_cast<double>(frame_bytes)};
}

Measurement time_decodes(const std::string& name, std::string_view text,
                         bool (*decode)(std::string_view), std::uint64_t num) {
  return time_frames(name, text.size(), num, [&] { return decode(text); });
}

// The notify of the envelope `post` carries, as the hub stamps it.
Measurement time_notify_encodes(std::string_view post, std::uint64_t num) {
  auto frame = transport::decode_hot_frame(post);
  if (!frame || !std::holds_alternative<transport::PostRequestFrame>(*frame)) {
    throw BenchmarkError("encode_notify: the post frame does not decode");
  }
  engine::Envelope envelope =
      *std::get<transport::PostRequestFrame>(*frame).envelope;
  envelope.envelope_id = "9d8c7b6a5f4e43d2c1b0a9f8e7d6c5b4";
  envelope.created_at = "2026-11-28T11:00:00.000000+00:00";
  const std::string recipient = "7e6d5c4b3a2948f7a6b5c4d3e2f1a0b9";
  const std::size_t bytes =
      transport::encode_notify(envelope, recipient).size();
  return time_frames("encode_notify", bytes, num, [&] {
    return transport::encode_notify(envelope, recipient).size() == bytes;
  });
}

void run(const Options& options) {
  const std::string post = post_frame(options.text_bytes);
  std::printf("Frames:     post_envelope %zu bytes, receipt %zu bytes\n",
              post.size(), kReceipt.size());
  std::printf("------------------------------------------------\n");
  std::vector<Measurement> measurements;
  auto add = [&](Measurement m) {
    print_line(m);
    measurements.push_back(std::move(m));
  };
  add(time_decodes("decode_post_tree", post, tree_post, options.num));
  add(time_decodes("decode_post_hot", post, hot_post, options.num));
  add(time_decodes("decode_receipt_tree", kReceipt, tree_receipt, options.num));
  add(time_decodes("decode_receipt_hot", kReceipt, hot_receipt, options.num));
  add(time_notify_encodes(post, options.num));
  emit_summary(measurements, options.json_path);
}

}  // namespace
}  // namespace parley::bench

int main(int argc, char** argv) {
  parley::bench::Options options;
  CLI::App app{
      "A post's frames: decoding (JSON tree against the hot path) and the "
      "notify's encoding"};
  app.add_option("--num", options.num, "Frames per loop (default 200000)")
      ->check(CLI::PositiveNumber);
  app.add_option("--text-bytes", options.text_bytes,
                 "Bytes of the posted text (default 300)");
  app.add_option("--json", options.json_path,
                 "Also write the JSON summary to this file");
  CLI11_PARSE(app, argc, argv);
  return parley::bench::run_reporting("parley-bench-frames",
                                      [&] { parley::bench::run(options); });
}
