// parley-bench-fold: pure adapter fold throughput, one thread, no I/O.
//
// For each built-in adapter, pre-encodes --num envelope log records of a
// realistic channel history in one contiguous, 8-byte aligned arena (as a
// storage engine's block would hold them), then times two loops over it:
//   decode_<adapter>  schema::GetRecord + body_as_Envelope + building the
//                     engine::EnvelopeView the hub hands to adapters
//   fold_<adapter>    the same decode, then adapter->fold(view, state)
// twice: streamed (one loop over the whole arena, which at the default size
// comes from DRAM) and _cached (blocks of kCachedBlock records, each read
// once untimed just before its timed loop, as the records a log iterator
// has just produced are in cache). Each loop runs kRuns times and the best
// run counts; every fold run starts from fresh initial_state()s, built
// outside the timed region.
//
// Reading the figures: the streamed decode-only loop is DRAM-latency bound
// and can be slower than the streamed fold loop (the fold's extra work per
// record lets the hardware prefetcher keep ahead). The _cached pair gives
// the CPU cost per record: decode alone, and what the fold adds. Targets are
// judged on the streamed fold line.
//
// Histories (ids, timestamps and texts as the hub writes them):
//   conversation  one channel, 2 participants: invite, ack, opened, then
//                 ag2.msg.text alternating initiator / respondent
//   discussion    one channel, 4 participants, round-robin texts in
//                 participant order starting with the creator
//   workflow      one channel, 2 participants, knobs.graph = AG2's
//                 round_robin graph: ag2.packet from the expected speaker
//                 with routing {"kind":"text"}, context_updates
//                 {"set":{},"delete":[]} and a body, and every
//                 --context-set-every-th envelope (default
//                 kDefaultContextSetEvery; 0: none) an ag2.context.set that
//                 sets two variables
//   consulting    complete consultations of 6 envelopes (invite, ack,
//                 opened, question, reply, closed), one state per channel
//
// After the last fold run the state is checked (turn counts; consulting:
// every channel replied), so an adapter that ignores the records cannot
// look fast. Output: db_bench-style lines and a JSON summary; the fold line
// of each adapter carries the fold/decode time ratio and its target.
// Failures abort with a message on stderr and exit status 1.

#include <flatbuffers/flexbuffers.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "benchmarks/bench_support.h"
#include "engine/adapters/builtin_adapters.h"
#include "engine/adapters/channel_adapter.h"
#include "engine/adapters/transition_graph.h"
#include "engine/base/envelope.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/channels/channel.h"
#include "parley/schemas/log_generated.h"
#include "schemas/record.h"

namespace parley::bench {
namespace {

using nlohmann::json;
namespace ev = engine::event_type;

constexpr int kRuns = 3;
constexpr std::uint64_t kDefaultEnvelopes = 1'000'000;
constexpr std::uint64_t kDefaultContextSetEvery = 16;
constexpr std::uint64_t kConsultationEnvelopes = 6;
// ~450 KiB of records: fits the 1 MiB L2 of the machine this was tuned on.
constexpr std::size_t kCachedBlock = 1024;

const std::vector<std::string> kAdapters = {"consulting", "conversation",
                                            "discussion", "workflow"};
// Decode + fold envelopes/s each adapter must reach; none for consulting.
const std::map<std::string, double> kTargets = {
    {"conversation", 20e6}, {"discussion", 20e6}, {"workflow", 5e6}};

// --- the record arena -------------------------------------------------------

// Finished, stamped records laid end to end, each on a kRecordAlignment
// boundary. Views stay valid as long as the arena lives.
class RecordArena {
 public:
  void add(std::string_view record, schema::RecordSequences sequences) {
    const std::size_t offset = words_.size() * sizeof(std::uint64_t);
    words_.resize(words_.size() + (record.size() + 7) / 8);
    char* at = reinterpret_cast<char*>(words_.data()) + offset;
    std::memcpy(at, record.data(), record.size());
    if (!schema::stamp_sequences({at, record.size()}, sequences)) {
      throw BenchmarkError("a built record has no sequence fields");
    }
    spans_.push_back({offset, record.size()});
    bytes_ += record.size();
  }

  // Call once every record was added.
  std::vector<std::string_view> views() const {
    std::vector<std::string_view> out;
    out.reserve(spans_.size());
    const char* base = reinterpret_cast<const char*>(words_.data());
    for (const auto& [offset, size] : spans_) {
      out.emplace_back(base + offset, size);
    }
    return out;
  }

  std::size_t bytes() const { return bytes_; }

 private:
  std::vector<std::uint64_t> words_;
  std::vector<std::pair<std::size_t, std::size_t>> spans_;
  std::size_t bytes_ = 0;
};

// --- channel histories ------------------------------------------------------

engine::FlexBytes flex(const json& value) {
  auto bytes = engine::to_flex(value);
  if (!bytes) throw BenchmarkError("to_flex: " + bytes.error().message);
  return std::move(*bytes);
}

engine::ChannelMetadata metadata_for(const engine::ChannelAdapter& adapter,
                                     std::uint64_t channel,
                                     std::size_t participants) {
  engine::ChannelMetadata metadata;
  metadata.channel_id = hex_id(0x1800000000000000 + channel, channel);
  metadata.manifest = adapter.manifest();
  metadata.state = engine::ChannelState::kActive;
  metadata.created_at = timestamp_at(channel * 1000);
  for (std::size_t i = 0; i < participants; ++i) {
    std::string role = i == 0              ? "initiator"
                       : participants == 2 ? "respondent"
                                           : "participant";
    metadata.participants.push_back(
        {hex_id(0x1700000000000000, i + 1), std::move(role),
         static_cast<std::int64_t>(i), metadata.created_at});
  }
  metadata.creator_id = metadata.participants.front().agent_id;
  if (adapter.manifest().type == "workflow") {
    std::vector<std::string> ids;
    for (const auto& participant : metadata.participants) {
      ids.push_back(participant.agent_id);
    }
    auto graph = engine::TransitionGraph::round_robin(ids);
    if (!graph) throw BenchmarkError(graph.error().message);
    metadata.knobs = json{{"graph", json::parse(*graph)}}.dump();
  }
  return metadata;
}

// Appends one channel's envelopes to an arena, as the hub would log them,
// with log sequences first_log, first_log + 1, ...; add() is a no-op once
// the log sequence would pass `last_log`.
class HistoryWriter {
 public:
  HistoryWriter(RecordArena& arena, const engine::ChannelMetadata& metadata,
                std::uint64_t first_log, std::uint64_t last_log)
      : arena_(arena),
        metadata_(metadata),
        next_log_(first_log),
        last_log_(last_log) {}

  void add(
      std::string_view sender, std::string_view type, const json& data,
      bool hub_authored,
      std::optional<std::vector<std::string_view>> audience = std::nullopt) {
    if (next_log_ > last_log_) return;
    const engine::FlexBytes event_data = flex(data);
    const std::string id = hex_id(0x1880000000000000 + next_log_, next_log_);
    const std::string at = timestamp_at(next_log_ * 137);
    const std::string record = schema::build_envelope_record({
        .channel_id = metadata_.channel_id,
        .sender_id = sender,
        .audience = std::move(audience),
        .event_type = type,
        .event_data = event_data,
        .envelope_id = id,
        .created_at = at,
        .hub_authored = hub_authored,
    });
    arena_.add(record, {next_log_, ++channel_sequence_});
    ++next_log_;
  }

  // Invites, acks and the opened envelope of the handshake.
  void handshake() {
    const std::string& creator = metadata_.creator_id;
    for (const auto& invitee : metadata_.participants) {
      if (invitee.agent_id == creator) continue;
      add(creator, ev::kChannelInvite,
          {{"channel_id", metadata_.channel_id},
           {"creator_id", creator},
           {"knobs", json::parse(metadata_.knobs)},
           {"labels", json::object()},
           {"manifest_type", metadata_.manifest.type},
           {"manifest_version", metadata_.manifest.version}},
          true, std::vector<std::string_view>{invitee.agent_id});
    }
    for (const auto& invitee : metadata_.participants) {
      if (invitee.agent_id == creator) continue;
      add(invitee.agent_id, ev::kChannelInviteAck,
          {{"channel_id", metadata_.channel_id}}, false);
    }
    add(creator, ev::kChannelOpened, {{"channel_id", metadata_.channel_id}},
        true, everyone());
  }

  void closed(std::string_view reason) {
    add(metadata_.creator_id, ev::kChannelClosed,
        {{"channel_id", metadata_.channel_id}, {"reason", reason}}, true,
        everyone());
  }

  bool full() const { return next_log_ > last_log_; }
  std::uint64_t next_log() const { return next_log_; }

 private:
  std::vector<std::string_view> everyone() const {
    std::vector<std::string_view> ids;
    for (const auto& participant : metadata_.participants) {
      ids.push_back(participant.agent_id);
    }
    return ids;
  }

  RecordArena& arena_;
  const engine::ChannelMetadata& metadata_;
  std::uint64_t next_log_;
  const std::uint64_t last_log_;
  std::uint64_t channel_sequence_ = 0;
};

std::string text_of(std::uint64_t turn) {
  return chat_text(40 + turn * 37 % 200, turn);
}

// One benchmark input: records, the channels they belong to, and what the
// folded state must say afterwards.
struct Workload {
  std::string adapter;
  RecordArena arena;
  std::vector<std::string_view> records;
  std::vector<engine::ChannelMetadata> channels;
  // Consecutive records of one channel: channel c owns records
  // [c * per_channel, (c + 1) * per_channel).
  std::uint64_t per_channel = 0;
  std::int64_t expected_turns = 0;  // per single channel; consulting: unused
};

// The one-channel histories: handshake, then `count` records in total.
void build_single_channel(Workload& work, const engine::ChannelAdapter& adapter,
                          std::uint64_t count,
                          std::uint64_t context_set_every) {
  const std::size_t participants = work.adapter == "discussion" ? 4 : 2;
  work.channels.push_back(metadata_for(adapter, 0, participants));
  const engine::ChannelMetadata& metadata = work.channels.front();
  HistoryWriter writer(work.arena, metadata, 1, count);
  writer.handshake();
  const bool workflow = work.adapter == "workflow";
  std::uint64_t turn = 0;
  while (!writer.full()) {
    const std::string& speaker =
        metadata.participants[turn % participants].agent_id;
    const std::uint64_t position = writer.next_log();
    if (!workflow) {
      writer.add(speaker, ev::kText, {{"text", text_of(turn)}}, false);
      ++turn;
    } else if (context_set_every != 0 && position % context_set_every == 0) {
      // Not a turn: the next packet comes from the same speaker.
      writer.add(speaker, ev::kContextSet,
                 {{"set", {{"step", position}, {"status", "drafting"}}},
                  {"delete", json::array()}},
                 false);
    } else {
      writer.add(speaker, ev::kPacket,
                 {{"routing", {{"kind", "text"}}},
                  {"context_updates",
                   {{"set", json::object()}, {"delete", json::array()}}},
                  {"body", text_of(turn)}},
                 false);
      ++turn;
    }
  }
  work.per_channel = count;
  work.expected_turns = static_cast<std::int64_t>(turn);
}

// Consultations of kConsultationEnvelopes records each, the last one cut
// short when `count` is not a multiple.
void build_consultations(Workload& work, const engine::ChannelAdapter& adapter,
                         std::uint64_t count) {
  const std::uint64_t channels =
      (count + kConsultationEnvelopes - 1) / kConsultationEnvelopes;
  work.channels.reserve(channels);
  for (std::uint64_t c = 0; c < channels; ++c) {
    work.channels.push_back(metadata_for(adapter, c, 2));
    const engine::ChannelMetadata& metadata = work.channels.back();
    HistoryWriter writer(work.arena, metadata, c * kConsultationEnvelopes + 1,
                         count);
    writer.handshake();
    writer.add(metadata.creator_id, ev::kText, {{"text", text_of(c)}}, false);
    writer.add(metadata.participants[1].agent_id, ev::kText,
               {{"text", text_of(c + 1)}}, false);
    writer.closed("consulting_complete");
  }
  work.per_channel = kConsultationEnvelopes;
}

Workload build_workload(const std::string& name,
                        const engine::ChannelAdapter& adapter,
                        std::uint64_t count, std::uint64_t context_set_every) {
  Workload work{.adapter = name};
  if (name == "consulting") {
    build_consultations(work, adapter, count);
  } else {
    build_single_channel(work, adapter, count, context_set_every);
  }
  work.records = work.arena.views();
  if (work.records.size() != count) {
    throw BenchmarkError("built " + std::to_string(work.records.size()) +
                         " records, expected " + std::to_string(count));
  }
  for (std::string_view record : work.records) {
    if (!schema::verify_record(record)) {
      throw BenchmarkError("a built record fails verification");
    }
  }
  return work;
}

// --- the timed loops --------------------------------------------------------

std::string_view view(const flatbuffers::String* text) {
  return {text->data(), text->size()};
}

// What the hub's fold does to a verified envelope record before it calls
// the adapter (engine/state/hub_state.cc).
inline engine::EnvelopeView decode(std::string_view record) {
  const schema::Record* root = schema::GetRecord(record.data());
  const schema::Envelope* envelope = root->body_as_Envelope();
  if (envelope == nullptr) throw BenchmarkError("not an envelope record");
  const auto* data = envelope->event_data();
  return {view(envelope->sender_id()),
          view(envelope->event_type()),
          view(envelope->envelope_id()),
          {data->data(), data->size()}};
}

// Keeps the decoded views observable so the decode is not elided.
volatile std::uint64_t checksum_sink = 0;

using States = std::vector<std::unique_ptr<engine::AdapterState>>;

States initial_states(const Workload& work,
                      const engine::ChannelAdapter& adapter) {
  States states;
  states.reserve(work.channels.size());
  for (const auto& metadata : work.channels) {
    auto state = adapter.initial_state(metadata);
    if (!state) {
      throw BenchmarkError("initial_state: " + state.error().message);
    }
    states.push_back(std::move(*state));
  }
  return states;
}

struct Pass {
  double seconds = std::numeric_limits<double>::infinity();  // wall clock
  std::optional<double> cpu_seconds;  // this thread; streamed passes only
};

// Reads one byte of every 64-byte cache line of `record`, and its last byte.
std::uint64_t touch(std::string_view record) {
  constexpr std::size_t kCacheLine = 64;
  std::uint64_t sum = static_cast<unsigned char>(record.back());
  for (std::size_t i = 0; i < record.size(); i += kCacheLine) {
    sum += static_cast<unsigned char>(record[i]);
  }
  return sum;
}

// One pass over every record, in order; folds into `states` when kFold.
// Streamed: one timed loop over the whole arena, which comes from DRAM.
// Cached: blocks of kCachedBlock records, each read once untimed (so it sits
// in L2, as a record the log iterator just produced does) and then timed.
template <bool kFold>
Pass timed_pass(const Workload& work, const engine::ChannelAdapter& adapter,
                States* states, bool cached) {
  std::uint64_t checksum = 0;
  std::size_t channel = 0;
  std::uint64_t in_channel = 0;
  double seconds = 0;
  const double cpu_start = thread_cpu_seconds();
  const std::span<const std::string_view> all(work.records);
  const std::size_t block = cached ? kCachedBlock : all.size();
  for (std::size_t first = 0; first < all.size(); first += block) {
    const auto records =
        all.subspan(first, std::min(block, all.size() - first));
    if (cached) {
      for (std::string_view record : records) checksum += touch(record);
    }
    const Clock::time_point start = Clock::now();
    for (std::string_view record : records) {
      const engine::EnvelopeView envelope = decode(record);
      checksum += envelope.sender_id.size() + envelope.event_type.size() +
                  envelope.envelope_id.size() + envelope.event_data.size();
      if constexpr (kFold) {
        adapter.fold(envelope, *(*states)[channel]);
        if (++in_channel == work.per_channel) {
          in_channel = 0;
          ++channel;
        }
      }
    }
    seconds += seconds_since(start);
  }
  Pass pass{.seconds = seconds};
  if (!cached) pass.cpu_seconds = thread_cpu_seconds() - cpu_start;
  checksum_sink = checksum_sink + checksum;
  return pass;
}

// The folded states say what the history says.
void check_states(const Workload& work, const States& states) {
  for (std::size_t c = 0; c < states.size(); ++c) {
    const json state = json::parse(states[c]->to_json());
    if (work.adapter == "consulting") {
      const bool complete =
          (c + 1) * kConsultationEnvelopes <= work.records.size();
      if (complete && !(state.value("initiator_sent", false) &&
                        state.value("respondent_replied", false))) {
        throw BenchmarkError("consultation " + std::to_string(c) +
                             " did not fold to complete: " + state.dump());
      }
      continue;
    }
    if (state.value("turn_count", std::int64_t{-1}) != work.expected_turns) {
      throw BenchmarkError(work.adapter + " folded to " + state.dump() +
                           ", expected turn_count " +
                           std::to_string(work.expected_turns));
    }
  }
}

// decode_<name><suffix> and fold_<name><suffix>, best of kRuns each.
std::vector<Measurement> measure_pair(const Workload& work,
                                      const engine::ChannelAdapter& adapter,
                                      bool cached) {
  const std::string& name = work.adapter;
  const std::uint64_t count = work.records.size();
  const std::string suffix = cached ? "_cached" : "";
  auto faster = [](const Pass& a, const Pass& b) {
    return a.seconds < b.seconds;
  };
  Pass decode_best;
  Pass fold_best;
  States states;
  for (int run = 0; run < kRuns; ++run) {
    decode_best = std::min(
        decode_best, timed_pass<false>(work, adapter, nullptr, cached), faster);
    states = initial_states(work, adapter);
    fold_best = std::min(
        fold_best, timed_pass<true>(work, adapter, &states, cached), faster);
  }
  check_states(work, states);

  const double bytes_per_op =
      static_cast<double>(work.arena.bytes()) / work.records.size();
  const double ratio = fold_best.seconds / decode_best.seconds;
  Measurement decode{.name = "decode_" + name + suffix,
                     .ops = count,
                     .seconds = decode_best.seconds,
                     .bytes_per_op = bytes_per_op,
                     .cpu_seconds = decode_best.cpu_seconds};
  decode.extra = {{"record_bytes", json_number(bytes_per_op, "%.1f")}};
  Measurement fold{.name = "fold_" + name + suffix,
                   .ops = count,
                   .seconds = fold_best.seconds,
                   .bytes_per_op = bytes_per_op,
                   .cpu_seconds = fold_best.cpu_seconds};
  const auto target = kTargets.find(name);
  const std::optional<double> goal =
      target == kTargets.end() ? std::nullopt : std::optional(target->second);
  const bool met = !goal || fold.ops_per_sec() >= *goal;
  // Uncached, the decode-only loop waits on DRAM and can be slower than
  // decode + fold; the difference means something only when cached.
  char alone[48] = "";
  if (cached) {
    std::snprintf(alone, sizeof alone, ", fold alone %.1f ns/op",
                  (fold_best.seconds - decode_best.seconds) * 1e9 / count);
  }
  char note[160];
  std::snprintf(note, sizeof note, "fold/decode %.2fx%s; target %s%s", ratio,
                alone,
                goal ? json_number(*goal / 1e6, "%.0f M/s").c_str() : "none",
                goal ? (met ? " met" : " MISSED") : "");
  fold.note = note;
  fold.extra = {{"record_bytes", json_number(bytes_per_op, "%.1f")},
                {"fold_over_decode", json_number(ratio, "%.3f")},
                {"target_ops_per_sec", json_number(goal, "%.0f")},
                {"target_met", goal ? json_bool(met) : "null"}};
  return {decode, fold};
}

std::vector<Measurement> measure(const std::string& name,
                                 const engine::ChannelAdapter& adapter,
                                 std::uint64_t count,
                                 std::uint64_t context_set_every) {
  const Workload work = build_workload(name, adapter, count, context_set_every);
  std::vector<Measurement> out = measure_pair(work, adapter, false);
  for (Measurement& m : measure_pair(work, adapter, true)) {
    out.push_back(std::move(m));
  }
  return out;
}

// --- main -------------------------------------------------------------------

struct Options {
  std::vector<std::string> adapters = kAdapters;
  std::uint64_t num = kDefaultEnvelopes;
  std::uint64_t context_set_every = kDefaultContextSetEvery;
  std::string json_path;
};

void run(const Options& options) {
  std::map<std::string, std::shared_ptr<const engine::ChannelAdapter>> by_type;
  for (auto& adapter : engine::builtin_adapters()) {
    by_type[adapter->manifest().type] = adapter;
  }
  std::printf("Envelopes:  %llu per adapter, one thread, in memory\n",
              static_cast<unsigned long long>(options.num));
  std::printf("Workflow:   an ag2.context.set every %llu envelopes (0: none)\n",
              static_cast<unsigned long long>(options.context_set_every));
  std::printf(
      "Runs:       best of %d; _cached: blocks of %zu records read "
      "just before\n",
      kRuns, kCachedBlock);
  const std::optional<double> load = load_average();
  std::printf("Load:       %s (1-minute average at start)\n",
              json_number(load, "%.2f").c_str());
  std::printf("------------------------------------------------\n");
  std::fflush(stdout);
  std::vector<Measurement> measurements;
  for (const std::string& name : options.adapters) {
    for (Measurement& m : measure(name, *by_type.at(name), options.num,
                                  options.context_set_every)) {
      m.extra.emplace_back("load_average", json_number(load, "%.2f"));
      print_line(m);
      measurements.push_back(std::move(m));
    }
  }
  emit_summary(measurements, options.json_path);
}

}  // namespace
}  // namespace parley::bench

int main(int argc, char** argv) {
  parley::bench::Options options;
  CLI::App app{"Adapter fold throughput: decode-only vs decode + fold"};
  app.add_option("--adapters", options.adapters,
                 "Comma-separated subset to run, in this order")
      ->delimiter(',')
      ->check(CLI::IsMember(parley::bench::kAdapters));
  app.add_option("--num", options.num,
                 "Envelope records per adapter (default 1000000)")
      ->check(CLI::PositiveNumber);
  app.add_option("--context-set-every", options.context_set_every,
                 "Workflow: every Nth envelope is an ag2.context.set (0: "
                 "none; default 16)");
  app.add_option("--json", options.json_path,
                 "Also write the JSON summary to this file");
  CLI11_PARSE(app, argc, argv);
  return parley::bench::run_reporting("parley-bench-fold",
                                      [&] { parley::bench::run(options); });
}
