// parley-bench-hydrate: how fast a hub opens on an existing store (RocksDB,
// or PostgreSQL with --store postgresql://…), i.e. folds every record of
// its log in order through the live engine's fold functions.
//
// Build phase (untimed). A store of --envelopes envelopes over --channels
// conversation channels is written straight through LogStore::append, in
// batches of kBuildBatch records, with Durability::kAsync, holding exactly
// the records the hub itself would have written:
//   agent_registered   one per agent (kChannelsPerAgent channels per agent)
//   channel_created    the metadata at creation: state pending, the
//                      respondent in pending_acks; then the hub's
//                      channel_created audit record
//   invite             hub-authored, creator -> respondent
//   ack                the respondent's, caused by the invite
//   opened             hub-authored, to both participants
//   texts              ag2.msg.text alternating initiator / respondent,
//                      interleaved across channels in rounds of --burst
//                      texts per channel (default 1: every envelope in a
//                      different channel from the one before)
// Then the store is closed. With --store LOCATION (a directory or a
// postgresql:// URI) the store is built there if there is none and kept,
// or reused as it is when it exists.
//
// Timed phase, each best of kRuns, each on a freshly opened store:
//   open_store   log::open_store (RocksDB: open, WAL replay; PostgreSQL:
//                connect, schema check, the writer's lock)
//   scan         LogStore::read over the whole log, a visitor that only
//                counts bytes (RocksDB iteration + the Verifier + the
//                sequence check every read applies)
//   hydrate      engine::Hub::open({.store = ...}): the whole fold
// and, on copies of the records held in memory (where the time goes):
//   verify       schema::verify_record on every record
//   fold_meta    HubState::apply on every record that is not an envelope
//                (agents' and channels' FlexBuffer -> JSON -> struct decode)
//   fold_env     HubState::apply on every envelope record (channel lookup,
//                lifecycle, causation index, adapter fold)
// Applying the non-envelope records first gives the state a hydrate gives,
// because every channel's creation precedes its envelopes.
//
// After each hydrate the hub must report, for the first, a middle and the
// last channel, state "active" and an adapter state whose turn_count is the
// number of texts written to it; otherwise the benchmark fails.
//
// Envelope lines count envelopes per second; MB/s is of all record bytes
// read (envelopes and the other records). Failures abort with a message on
// stderr and exit status 1.

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "benchmarks/bench_support.h"
#include "engine/adapters/adapter_registry.h"
#include "engine/adapters/builtin_adapters.h"
#include "engine/base/envelope.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/channels/channel.h"
#include "engine/hub/audit.h"
#include "engine/hub/hub.h"
#include "engine/records/log_records.h"
#include "engine/registry/registry.h"
#include "engine/state/hub_state.h"
#include "log/log_store.h"
#include "log/open_store.h"
#include "log/store_location.h"
#include "parley/schemas/log_generated.h"
#include "schemas/record.h"

namespace parley::bench {
namespace {

namespace fs = std::filesystem;
namespace ev = engine::event_type;
using nlohmann::json;

constexpr int kRuns = 3;
constexpr std::uint64_t kDefaultEnvelopes = 1'000'000;
constexpr std::uint64_t kDefaultChannels = 10'000;
constexpr std::uint64_t kChannelsPerAgent = 4;
constexpr std::size_t kBuildBatch = 10'000;
constexpr std::uint64_t kHandshakeEnvelopes = 3;  // invite, ack, opened
constexpr double kTargetEnvelopesPerSec = 1.5e6;

// Log ids and times are fabricated from these so that envelope ids and
// created_at increase in log order, as the hub's minter makes them.
constexpr std::uint64_t kEnvelopeIdBase = 0x1880000000000000;
constexpr std::uint64_t kChannelIdBase = 0x1870000000000000;
constexpr std::uint64_t kAgentIdBase = 0x1860000000000000;

[[noreturn]] void fail_log(std::string_view what, const log::Error& error) {
  throw BenchmarkError(std::string(what) + " failed (" +
                       std::string(log::to_string(error.code)) +
                       "): " + error.message);
}

template <typename T>
T value_or_throw(log::Result<T> result, std::string_view what) {
  if (!result) fail_log(what, result.error());
  return std::move(*result);
}

void check(const log::Result<void>& result, std::string_view what) {
  if (!result) fail_log(what, result.error());
}

std::unique_ptr<log::LogStore> open_store(const std::string& location,
                                          log::Durability durability) {
  return value_or_throw(
             log::open_store(location, {.durability = durability}),
             "opening the store in " + log::redact_location(location))
      .store;
}

// Whether `location` holds a store (one to reuse).
bool holds_store(const std::string& location) {
  auto viewed = log::open_store_read_only(location);
  if (viewed) return true;
  if (viewed.error().code == log::ErrorCode::kNotFound) return false;
  fail_log("looking for a store in " + log::redact_location(location),
           viewed.error());
}

// --- the history
// --------------------------------------------------------------

// How the envelopes are spread: channel c gets texts_of(c) texts after its
// handshake.
struct Shape {
  std::uint64_t envelopes = kDefaultEnvelopes;
  std::uint64_t channels = kDefaultChannels;
  // Consecutive texts of one channel before the next channel's: 1 is fully
  // interleaved (the worst case for the fold's cache), texts_of(0) is one
  // channel after another.
  std::uint64_t burst = 1;

  std::uint64_t agents() const {
    return std::max<std::uint64_t>(2, channels / kChannelsPerAgent);
  }
  std::uint64_t texts_of(std::uint64_t channel) const {
    const std::uint64_t texts = envelopes - channels * kHandshakeEnvelopes;
    return texts / channels + (channel < texts % channels ? 1 : 0);
  }
  std::uint64_t max_texts() const { return texts_of(0); }

  std::string agent_id(std::uint64_t agent) const {
    return hex_id(kAgentIdBase + agent, agent);
  }
  std::string channel_id(std::uint64_t channel) const {
    return hex_id(kChannelIdBase + channel, channel);
  }
  // Creator and respondent: distinct agents, every agent in some channel.
  std::pair<std::uint64_t, std::uint64_t> pair_of(std::uint64_t channel) const {
    const std::uint64_t n = agents();
    const std::uint64_t creator = channel % n;
    return {creator, (creator + 1 + channel / n % (n - 1)) % n};
  }
};

// Appends records in batches of kBuildBatch; stamps ids and times from a
// running counter so they increase in log order.
class StoreWriter {
 public:
  explicit StoreWriter(log::LogStore& store) : store_(store) {}

  void add(std::string record, std::string channel = {}) {
    bytes_ += record.size();
    batch_.push_back({std::move(record), std::move(channel), {}});
    if (batch_.size() == kBuildBatch) flush();
  }

  void flush() {
    if (batch_.empty()) return;
    value_or_throw(store_.append(batch_), "appending a build batch");
    records_ += batch_.size();
    batch_.clear();
  }

  // The next envelope id and created_at.
  std::string next_envelope_id() {
    ++envelopes_;
    return hex_id(kEnvelopeIdBase + envelopes_ * 1000, envelopes_);
  }
  std::string now() const { return timestamp_at(envelopes_ * 50); }

  std::uint64_t records() const { return records_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  log::LogStore& store_;
  std::vector<log::AppendEntry> batch_;
  std::uint64_t records_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t envelopes_ = 0;
};

engine::FlexBytes flex(const json& value) {
  auto bytes = engine::to_flex(value);
  if (!bytes) throw BenchmarkError("to_flex: " + bytes.error().message);
  return std::move(*bytes);
}

engine::AgentRecord agent_record(const Shape& shape, std::uint64_t agent) {
  engine::AgentRecord record;
  record.passport.name = "agent-" + std::to_string(agent);
  record.passport.owner = "bench";
  record.passport.agent_id = shape.agent_id(agent);
  record.passport.created_at = timestamp_at(0);
  record.resume.summary = "Answers questions about the build.";
  record.resume.claimed_capabilities = {"chat"};
  record.resume.last_updated = timestamp_at(0);
  return record;
}

engine::ChannelMetadata channel_metadata(
    const Shape& shape, const engine::ChannelManifest& manifest,
    std::uint64_t channel, const std::string& created_at) {
  const auto [creator, respondent] = shape.pair_of(channel);
  engine::ChannelMetadata metadata;
  metadata.channel_id = shape.channel_id(channel);
  metadata.manifest = manifest;
  metadata.creator_id = shape.agent_id(creator);
  metadata.participants = {
      {shape.agent_id(creator), "initiator", 0, created_at},
      {shape.agent_id(respondent), "respondent", 1, created_at}};
  metadata.state = engine::ChannelState::kPending;
  metadata.created_at = created_at;
  metadata.expires_at = "2027-01-01T00:00:00+00:00";
  metadata.pending_acks = {shape.agent_id(respondent)};
  return metadata;
}

engine::Envelope envelope(const engine::ChannelMetadata& metadata,
                          StoreWriter& writer, std::string sender,
                          std::string_view type, const json& data) {
  engine::Envelope out;
  out.channel_id = metadata.channel_id;
  out.sender_id = std::move(sender);
  out.event_type = std::string(type);
  out.event_data = flex(data);
  out.envelope_id = writer.next_envelope_id();
  out.created_at = writer.now();
  return out;
}

// The records of creating `channel` and of its handshake, as
// Hub::create_channel and the invitee's ack write them.
void write_channel(const Shape& shape, const engine::ChannelManifest& manifest,
                   std::uint64_t channel, StoreWriter& writer) {
  const engine::ChannelMetadata metadata =
      channel_metadata(shape, manifest, channel, writer.now());
  const std::string& creator = metadata.creator_id;
  const std::string& respondent = metadata.participants[1].agent_id;
  const std::vector<std::string> everyone = {creator, respondent};
  writer.add(engine::channel_created_record(metadata));
  writer.add(engine::audit_record({{"at", metadata.created_at},
                                   {"kind", "channel_created"},
                                   {"channel_id", metadata.channel_id},
                                   {"manifest_type", manifest.type},
                                   {"manifest_version", manifest.version},
                                   {"creator_id", creator},
                                   {"participants", everyone}}));
  engine::Envelope invite =
      envelope(metadata, writer, creator, ev::kChannelInvite,
               {{"channel_id", metadata.channel_id},
                {"manifest_type", manifest.type},
                {"manifest_version", manifest.version},
                {"creator_id", creator},
                {"knobs", json::object()},
                {"labels", json::object()}});
  invite.audience = std::vector{respondent};
  writer.add(engine::envelope_record(invite, /*hub_authored=*/true),
             metadata.channel_id);
  engine::Envelope ack =
      envelope(metadata, writer, respondent, ev::kChannelInviteAck,
               {{"channel_id", metadata.channel_id}});
  ack.causation_id = invite.envelope_id;
  writer.add(engine::envelope_record(ack, /*hub_authored=*/false),
             metadata.channel_id);
  engine::Envelope opened =
      envelope(metadata, writer, creator, ev::kChannelOpened,
               {{"channel_id", metadata.channel_id}});
  opened.audience = everyone;
  writer.add(engine::envelope_record(opened, /*hub_authored=*/true),
             metadata.channel_id);
}

struct BuildReport {
  std::uint64_t records = 0;
  double seconds = 0;
};

BuildReport build_store(const std::string& dir, const Shape& shape) {
  const Clock::time_point start = Clock::now();
  auto store = open_store(dir, log::Durability::kAsync);
  if (store->last_sequence() != 0) {
    throw BenchmarkError(log::redact_location(dir) + " already holds a log");
  }
  const engine::ChannelManifest manifest = [] {
    for (const auto& adapter : engine::builtin_adapters()) {
      if (adapter->manifest().type == "conversation") {
        return adapter->manifest();
      }
    }
    throw BenchmarkError("no conversation adapter");
  }();
  StoreWriter writer(*store);
  for (std::uint64_t agent = 0; agent < shape.agents(); ++agent) {
    writer.add(engine::agent_registered_record(agent_record(shape, agent)));
  }
  for (std::uint64_t channel = 0; channel < shape.channels; ++channel) {
    write_channel(shape, manifest, channel, writer);
  }
  // Texts in rounds: each round gives every channel its next `burst` texts.
  std::vector<engine::ChannelMetadata> channels;
  channels.reserve(shape.channels);
  for (std::uint64_t channel = 0; channel < shape.channels; ++channel) {
    channels.push_back(channel_metadata(shape, manifest, channel, ""));
  }
  for (std::uint64_t first = 0; first < shape.max_texts();
       first += shape.burst) {
    for (std::uint64_t channel = 0; channel < shape.channels; ++channel) {
      const engine::ChannelMetadata& metadata = channels[channel];
      const std::uint64_t end =
          std::min(first + shape.burst, shape.texts_of(channel));
      for (std::uint64_t turn = first; turn < end; ++turn) {
        const std::string& speaker = metadata.participants[turn % 2].agent_id;
        const std::size_t length = 40 + (turn * 131 + channel * 17) % 200;
        engine::Envelope text =
            envelope(metadata, writer, speaker, ev::kText,
                     {{"text", chat_text(length, turn + channel)}});
        writer.add(engine::envelope_record(text, /*hub_authored=*/false),
                   metadata.channel_id);
      }
    }
  }
  writer.flush();
  check(store->close(), "closing the built store");
  return {writer.records(), seconds_since(start)};
}

// --- timed phases
// -------------------------------------------------------------

struct LogTotals {
  std::uint64_t records = 0;
  std::uint64_t envelopes = 0;
  std::uint64_t bytes = 0;
};

bool is_envelope(std::string_view record) {
  return schema::GetRecord(record.data())->body_type() ==
         schema::Body::Envelope;
}

struct Timing {
  double seconds = std::numeric_limits<double>::infinity();
  double cpu_seconds = 0;
};

Timing faster(const Timing& a, const Timing& b) {
  return a.seconds <= b.seconds ? a : b;
}

// Every visited record is copied out when `copies` is given.
Timing timed_scan(const std::string& dir, LogTotals& totals,
                  std::vector<std::string>* copies) {
  auto store = open_store(dir, log::Durability::kSync);
  LogTotals seen;
  const double cpu_start = thread_cpu_seconds();
  const Clock::time_point start = Clock::now();
  check(store->read(1, log::kLastSequence,
                    [&](std::uint64_t, std::string_view record) {
                      ++seen.records;
                      seen.bytes += record.size();
                      if (copies) {
                        copies->emplace_back(record);
                        if (is_envelope(record)) ++seen.envelopes;
                      }
                      return true;
                    }),
        "scanning the log");
  const Timing timing{seconds_since(start), thread_cpu_seconds() - cpu_start};
  check(store->close(), "closing the store");
  if (copies) totals = seen;
  return timing;
}

void check_hub(const engine::Hub& hub, const Shape& shape) {
  for (const std::uint64_t channel :
       {std::uint64_t{0}, shape.channels / 2, shape.channels - 1}) {
    const std::string id = shape.channel_id(channel);
    auto metadata = hub.get_channel(id);
    if (!metadata) {
      throw BenchmarkError("hydrated hub lacks channel " + id + ": " +
                           metadata.error().message);
    }
    if (metadata->state != engine::ChannelState::kActive) {
      throw BenchmarkError("channel " + id + " hydrated as " +
                           std::string(engine::to_string(metadata->state)));
    }
    auto state = hub.adapter_state(id);
    if (!state || !*state) {
      throw BenchmarkError("channel " + id + " has no adapter state");
    }
    const json folded = json::parse(**state);
    const auto expected = static_cast<std::int64_t>(shape.texts_of(channel));
    if (folded.value("turn_count", std::int64_t{-1}) != expected) {
      throw BenchmarkError("channel " + id + " hydrated to " + folded.dump() +
                           ", expected turn_count " + std::to_string(expected));
    }
  }
}

// Opens the store, then the hub on it; returns both timings.
std::pair<Timing, Timing> timed_open(const std::string& dir,
                                     const Shape& shape) {
  double cpu_start = thread_cpu_seconds();
  Clock::time_point start = Clock::now();
  std::shared_ptr<log::LogStore> store =
      open_store(dir, log::Durability::kSync);
  const Timing opened{seconds_since(start), thread_cpu_seconds() - cpu_start};
  cpu_start = thread_cpu_seconds();
  start = Clock::now();
  auto hub = engine::Hub::open({.store = store});
  const Timing hydrated{seconds_since(start), thread_cpu_seconds() - cpu_start};
  if (!hub) throw BenchmarkError("Hub::open: " + hub.error().message);
  check_hub(**hub, shape);
  if (auto closed = (*hub)->close(); !closed) {
    throw BenchmarkError("closing the hub: " + closed.error().message);
  }
  return {opened, hydrated};
}

// Keeps the verifier's results observable.
volatile std::uint64_t verified_sink = 0;

Timing timed_verify(const std::vector<std::string>& records) {
  std::uint64_t sum = 0;
  const double cpu_start = thread_cpu_seconds();
  const Clock::time_point start = Clock::now();
  for (const std::string& record : records) {
    const auto sequences = schema::verify_record(record);
    if (!sequences) throw BenchmarkError("a copied record fails verification");
    sum += sequences->log_sequence;
  }
  const Timing timing{seconds_since(start), thread_cpu_seconds() - cpu_start};
  verified_sink = verified_sink + sum;
  return timing;
}

// Applies the non-envelope records, then the envelope records, to a fresh
// HubState; returns both timings.
std::pair<Timing, Timing> timed_fold(const std::vector<std::string>& records) {
  engine::AdapterRegistry adapters;
  for (auto& adapter : engine::builtin_adapters()) adapters.add(adapter);
  engine::HubState state(adapters);
  std::pair<Timing, Timing> out;
  for (const bool envelopes : {false, true}) {
    const double cpu_start = thread_cpu_seconds();
    const Clock::time_point start = Clock::now();
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (is_envelope(records[i]) != envelopes) continue;
      auto applied = state.apply(i + 1, records[i]);
      if (!applied) {
        throw BenchmarkError("HubState::apply: " + applied.error().message);
      }
    }
    const Timing timing{seconds_since(start), thread_cpu_seconds() - cpu_start};
    (envelopes ? out.second : out.first) = timing;
  }
  return out;
}

Measurement measurement(std::string name, std::uint64_t ops,
                        const Timing& timing, double bytes_per_op) {
  return {.name = std::move(name),
          .ops = ops,
          .seconds = timing.seconds,
          .bytes_per_op = bytes_per_op,
          .cpu_seconds = timing.cpu_seconds};
}

// --- main
// ---------------------------------------------------------------------

struct Options {
  Shape shape;
  std::string json_path;
  fs::path dir = fs::temp_directory_path();
  std::optional<std::string> store;
};

void run(const Options& options) {
  const Shape& shape = options.shape;
  if (shape.channels == 0 ||
      shape.envelopes < shape.channels * kHandshakeEnvelopes) {
    throw BenchmarkError("need at least one channel and " +
                         std::to_string(kHandshakeEnvelopes) +
                         " envelopes per channel");
  }
  std::optional<ScratchDir> scratch;
  std::string dir;
  if (options.store) {
    dir = *options.store;
  } else {
    scratch.emplace(options.dir);
    dir = (scratch->path() / "store").string();
  }
  std::printf("Store:      %s\n", log::redact_location(dir).c_str());
  std::printf(
      "History:    %llu envelopes over %llu conversation channels, "
      "%llu agents, texts in bursts of %llu per channel\n",
      static_cast<unsigned long long>(shape.envelopes),
      static_cast<unsigned long long>(shape.channels),
      static_cast<unsigned long long>(shape.agents()),
      static_cast<unsigned long long>(shape.burst));
  std::fflush(stdout);
  if (!holds_store(dir)) {
    const BuildReport built = build_store(dir, shape);
    std::printf(
        "Built:      %llu records in %.1f s (kAsync, batches of "
        "%zu)\n",
        static_cast<unsigned long long>(built.records), built.seconds,
        kBuildBatch);
  } else {
    std::printf("Built:      reusing the existing store\n");
  }
  std::printf("Runs:       best of %d, warm page cache\n", kRuns);
  const std::optional<double> load = load_average();
  std::printf("Load:       %s (1-minute average before the timed runs)\n",
              json_number(load, "%.2f").c_str());
  std::printf("------------------------------------------------\n");
  std::fflush(stdout);

  // One untimed scan counts the log and warms the page cache.
  LogTotals totals;
  std::vector<std::string> copies;
  timed_scan(dir, totals, &copies);
  if (totals.envelopes != shape.envelopes) {
    throw BenchmarkError("the store holds " + std::to_string(totals.envelopes) +
                         " envelopes, expected " +
                         std::to_string(shape.envelopes));
  }
  const double bytes_per_envelope =
      static_cast<double>(totals.bytes) / totals.envelopes;
  const double bytes_per_record =
      static_cast<double>(totals.bytes) / totals.records;

  Timing open_best, scan_best, hydrate_best;
  for (int run = 0; run < kRuns; ++run) {
    LogTotals ignored;
    scan_best = faster(scan_best, timed_scan(dir, ignored, nullptr));
    const auto [opened, hydrated] = timed_open(dir, shape);
    open_best = faster(open_best, opened);
    hydrate_best = faster(hydrate_best, hydrated);
  }
  Timing verify_best, meta_best, envelope_best;
  for (int run = 0; run < kRuns; ++run) {
    verify_best = faster(verify_best, timed_verify(copies));
    const auto [meta, envelopes] = timed_fold(copies);
    meta_best = faster(meta_best, meta);
    envelope_best = faster(envelope_best, envelopes);
  }
  const std::uint64_t others = totals.records - totals.envelopes;

  std::vector<Measurement> measurements;
  measurements.push_back(measurement("open_store", 1, open_best, 0));
  measurements.push_back(
      measurement("scan", totals.records, scan_best, bytes_per_record));
  measurements.back().note = "records; the store's reads + Verifier";
  Measurement hydrate = measurement("hydrate", totals.envelopes, hydrate_best,
                                    bytes_per_envelope);
  const bool met = hydrate.ops_per_sec() >= kTargetEnvelopesPerSec;
  hydrate.note = std::to_string(totals.records) + " records; target " +
                 json_number(kTargetEnvelopesPerSec / 1e6, "%.1f") + " M/s " +
                 (met ? "met" : "MISSED");
  hydrate.extra = {
      {"records", std::to_string(totals.records)},
      {"record_bytes", std::to_string(totals.bytes)},
      {"channels", std::to_string(shape.channels)},
      {"burst", std::to_string(shape.burst)},
      {"load_average", json_number(load, "%.2f")},
      {"target_ops_per_sec", json_number(kTargetEnvelopesPerSec, "%.0f")},
      {"target_met", json_bool(met)}};
  measurements.push_back(std::move(hydrate));
  measurements.push_back(
      measurement("verify", totals.records, verify_best, bytes_per_record));
  measurements.back().note = "records, in memory";
  measurements.push_back(measurement("fold_meta", others, meta_best, 0));
  measurements.back().note = "agent/channel/audit records, in memory";
  measurements.push_back(
      measurement("fold_env", totals.envelopes, envelope_best, 0));
  measurements.back().note = "envelope records, in memory";
  for (const Measurement& m : measurements) print_line(m);

  // Where a hydrate's time goes, as shares of the hydrate.
  const double total = hydrate_best.seconds;
  const double iterate = scan_best.seconds - verify_best.seconds;
  std::printf(
      "Breakdown:  iterate %.0f%%, verify %.0f%%, fold_meta %.0f%%, "
      "fold_env %.0f%%, other %.0f%% of the hydrate\n",
      iterate * 100 / total, verify_best.seconds * 100 / total,
      meta_best.seconds * 100 / total, envelope_best.seconds * 100 / total,
      (total - scan_best.seconds - meta_best.seconds - envelope_best.seconds) *
          100 / total);
  emit_summary(measurements, options.json_path);
}

}  // namespace
}  // namespace parley::bench

int main(int argc, char** argv) {
  parley::bench::Options options;
  CLI::App app{
      "Hydrate throughput: Hub::open on a RocksDB or PostgreSQL store"};
  app.add_option("--num,--envelopes", options.shape.envelopes,
                 "Envelopes in the store (default 1000000)")
      ->check(CLI::PositiveNumber);
  app.add_option("--channels", options.shape.channels,
                 "Conversation channels they are spread over (default 10000)")
      ->check(CLI::PositiveNumber);
  app.add_option("--burst", options.shape.burst,
                 "Consecutive texts per channel in the log (default 1: fully "
                 "interleaved)")
      ->check(CLI::PositiveNumber);
  app.add_option("--json", options.json_path,
                 "Also write the JSON summary to this file");
  app.add_option("--dir", options.dir, "Where to create the temporary store")
      ->check(CLI::ExistingDirectory);
  app.add_option("--store", options.store,
                 "Build the store here (a directory or a postgresql:// URI) "
                 "and keep it, or reuse it if it exists (it must have been "
                 "built with the same shape)");
  CLI11_PARSE(app, argc, argv);
  return parley::bench::run_reporting("parley-bench-hydrate",
                                      [&] { parley::bench::run(options); });
}
