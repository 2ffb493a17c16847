// parley-bench-post: envelopes through the whole post pipeline
// (engine::Hub::post_envelope: validate, stamp, append, fold, deliver).
//
// Scenarios, each on a fresh hub over a fresh RocksDB store in its own
// temporary directory that is removed afterwards (with --postgres URI: over
// the PostgreSQL store in that database, dropped before each scenario):
//   post_sync_1     one poster thread, Durability::kSync (the default)
//   post_sync_32t   32 poster threads, kSync
//   post_async_1    one poster thread, Durability::kAsync (no fsync: what
//                   the pipeline costs without the sync)
//   post_async_32t  32 poster threads, kAsync
//   post_pipelined_256_sync    one thread keeps 256 posts in flight through
//                   the completion-style Hub::post_envelope(envelope, done)
//                   (what `parley serve` uses), round robin over 32
//                   channels, kSync; latency is submit to completion
//   post_pipelined_256_nosync  the same, kAsync
//   log_ceiling_32  no hub: one thread appends the records 32 posters
//                   write, 32 per batch (one per channel), kSync, straight
//                   to a fresh RocksDB LogStore. 32 posters that each wait
//                   for their post to be durable put at most 32 records
//                   into one sync, so this is the most post_sync_32t can
//                   reach on the machine. Latencies are per batch.
//
// Set-up (untimed): two agents per poster, registered through the hub, and
// one conversation channel per poster created through Hub::create_channel;
// every agent is subscribed with a callback that acks its invites as AG2's
// HumanClient does (so create_channel returns with the channel active) and
// counts the other deliveries. A poster posts ag2.msg.text envelopes on its
// own channel, alternating between the channel's two participants as a
// conversation does (which also keeps every inbox within its default
// limit). Each post_envelope call is timed on its own for p50/p99; the
// throughput is all posts over the wall time from the posters' common start
// to the last one's end. Afterwards every channel's adapter state must
// count exactly the texts posted on it, and every text must have been
// delivered once.
//
// Output: one db_bench-style line per scenario, then a JSON summary. A failed
// call aborts the benchmark with a message on stderr and exit status 1.

#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "benchmarks/bench_support.h"
#include "engine/base/envelope.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/base/ids.h"
#include "engine/hub/hub.h"
#include "engine/records/log_records.h"
#include "log/log_store.h"
#include "log/postgres_log_store.h"
#include "log/rocksdb_log_store.h"
#include "log/store_location.h"

namespace parley::bench {
namespace {

namespace fs = std::filesystem;
namespace ev = engine::event_type;
using nlohmann::json;

constexpr unsigned kConcurrentPosters = 32;
constexpr std::size_t kDistinctTexts = 64;

constexpr std::size_t kPipelineDepth = 256;
// A pipelined poster that found no room sleeps until this many posts are in
// flight, then refills: a client tops up its window in bursts instead of
// being woken for every completion.
constexpr std::size_t kRefillAt = kPipelineDepth - 32;

const std::vector<std::string> kScenarios = {
    "post_sync_1",    "post_sync_32t",           "post_async_1",
    "post_async_32t", "post_pipelined_256_sync", "post_pipelined_256_nosync",
    "log_ceiling_32"};
const std::map<std::string, std::uint64_t> kDefaultOps = {
    {"post_sync_1", 20'000},
    {"post_sync_32t", 200'000},
    {"post_async_1", 200'000},
    {"post_async_32t", 200'000},
    {"post_pipelined_256_sync", 400'000},
    {"post_pipelined_256_nosync", 400'000},
    {"log_ceiling_32", 200'000}};
// Posts/s the durable scenarios must reach.
const std::map<std::string, double> kTargets = {{"post_sync_1", 4e3},
                                                {"post_sync_32t", 100e3}};

template <typename T>
T value_or_throw(engine::Result<T> result, std::string_view what) {
  if (!result)
    throw BenchmarkError(std::string(what) + ": " + result.error().message);
  return std::move(*result);
}

// The database --postgres names, or empty: set by main() before any
// scenario runs, read-only afterwards.
std::string postgres_uri;

// A fresh store in `dir`, or in the --postgres database (whose Parley
// store is dropped first).
std::unique_ptr<log::LogStore> open_bench_store(const fs::path& dir,
                                                log::Durability durability) {
  if (postgres_uri.empty()) {
    auto opened = log::open_rocksdb_log_store(dir, {.durability = durability});
    if (!opened) {
      throw BenchmarkError("opening the store: " + opened.error().message);
    }
    return std::move(opened->store);
  }
  if (auto dropped = log::drop_postgres_log_store(postgres_uri);
      !dropped && dropped.error().code != log::ErrorCode::kNotFound) {
    throw BenchmarkError("dropping the store: " + dropped.error().message);
  }
  auto opened =
      log::open_postgres_log_store(postgres_uri, {.durability = durability});
  if (!opened) {
    throw BenchmarkError("opening the store: " + opened.error().message);
  }
  return std::move(opened->store);
}

// A hub on a fresh store in its own scratch directory, with `posters`
// active conversation channels and `pending_handshakes` channels whose
// create_channel waits for an ack that never comes (until the hub closes).
// The hub closes before the directory goes.
class BenchHub {
 public:
  BenchHub(const fs::path& base, log::Durability durability, unsigned posters,
           unsigned pending_handshakes)
      : dir_(base) {
    hub_ = value_or_throw(
        engine::Hub::open(
            {.store = std::shared_ptr<log::LogStore>(
                 open_bench_store(dir_.path() / "store", durability)),
             .invite_ack_timeout = pending_handshakes > 0
                                       ? std::chrono::hours(1)
                                       : std::chrono::seconds(10)}),
        "Hub::open");
    for (unsigned p = 0; p < posters; ++p) {
      const std::string creator = add_agent("poster-" + std::to_string(p));
      const std::string partner = add_agent("partner-" + std::to_string(p));
      const engine::ChannelMetadata channel =
          value_or_throw(hub_->create_channel({.creator_id = creator,
                                               .manifest_type = "conversation",
                                               .participants = {partner}}),
                         "create_channel");
      if (channel.state != engine::ChannelState::kActive) {
        throw BenchmarkError("channel " + channel.channel_id + " did not open");
      }
      channels_.push_back({channel.channel_id, {creator, partner}});
    }
    if (pending_handshakes > 0) wait_on_handshakes(pending_handshakes);
  }
  BenchHub(const BenchHub&) = delete;
  BenchHub& operator=(const BenchHub&) = delete;
  ~BenchHub() {
    if (hub_) (void)hub_->close();
  }

  struct Channel {
    std::string id;
    std::string participants[2];
  };

  engine::Hub& hub() { return *hub_; }
  const std::vector<Channel>& channels() const { return channels_; }
  std::uint64_t text_deliveries() const { return text_deliveries_; }

  void close() {
    if (auto closed = hub_->close(); !closed) {
      throw BenchmarkError("closing the hub: " + closed.error().message);
    }
  }

 private:
  // Opens `count` channels to an agent that never reads its invites, and
  // returns once every one of them is pending.
  void wait_on_handshakes(unsigned count) {
    const std::string creator = add_agent("inviter");
    engine::Passport silent{.name = "silent"};
    const std::string invitee =
        *value_or_throw(hub_->register_identity(std::move(silent), {},
                                                std::nullopt, std::nullopt),
                        "register_identity")
             .agent_id;
    for (unsigned i = 0; i < count; ++i) {
      hub_->create_channel({.creator_id = creator,
                            .manifest_type = "conversation",
                            .participants = {invitee}},
                           [](engine::Result<engine::ChannelMetadata>) {});
    }
    while (hub_->list_channels(creator, engine::ChannelState::kPending, count)
               .size() < count) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  std::string add_agent(std::string name) {
    engine::Passport passport{.name = std::move(name)};
    const engine::Passport registered =
        value_or_throw(hub_->register_identity(std::move(passport), {},
                                               std::nullopt, std::nullopt),
                       "register_identity");
    const std::string id = *registered.agent_id;
    hub_->subscribe(
        id, [this](const std::string& recipient,
                   const std::shared_ptr<const engine::Envelope>& delivered) {
          const engine::Envelope& envelope = *delivered;
          if (envelope.event_type == ev::kText) {
            text_deliveries_.fetch_add(1, std::memory_order_relaxed);
            return;
          }
          if (envelope.event_type != ev::kChannelInvite) return;
          engine::Envelope ack;
          ack.channel_id = envelope.channel_id;
          ack.sender_id = recipient;
          ack.event_type = std::string(ev::kChannelInviteAck);
          ack.event_data =
              engine::to_flex(json{{"channel_id", envelope.channel_id}})
                  .value();
          ack.causation_id = envelope.envelope_id;
          (void)hub_->post_envelope(std::move(ack));
        });
    return id;
  }

  ScratchDir dir_;
  std::unique_ptr<engine::Hub> hub_;
  std::vector<Channel> channels_;
  std::atomic<std::uint64_t> text_deliveries_ = 0;
};

// Pre-encoded ag2.msg.text event_data of assorted lengths.
std::vector<engine::FlexBytes> text_pool() {
  std::vector<engine::FlexBytes> pool;
  for (std::size_t i = 0; i < kDistinctTexts; ++i) {
    pool.push_back(
        engine::to_flex(json{{"text", chat_text(40 + i * 37 % 200, i)}})
            .value());
  }
  return pool;
}

// Posts `count` texts on `channel`, alternating senders; returns each
// call's latency. Stops early once `abort` is set; throws BenchmarkError on
// a refused post.
std::vector<Clock::duration> post_texts(
    engine::Hub& hub, const BenchHub::Channel& channel,
    const std::vector<engine::FlexBytes>& texts, std::uint64_t count,
    const std::atomic<bool>& abort) {
  std::vector<Clock::duration> latencies;
  latencies.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    if (abort.load(std::memory_order_relaxed)) break;
    engine::Envelope envelope;
    envelope.channel_id = channel.id;
    envelope.sender_id = channel.participants[i % 2];
    envelope.event_type = std::string(ev::kText);
    envelope.event_data = texts[i % texts.size()];
    const Clock::time_point start = Clock::now();
    auto posted = hub.post_envelope(std::move(envelope));
    latencies.push_back(Clock::now() - start);
    value_or_throw(std::move(posted), "post_envelope");
  }
  return latencies;
}

std::uint64_t share_of(std::uint64_t total, unsigned parts, unsigned part) {
  return total / parts + (part < total % parts ? 1 : 0);
}

struct Run {
  double seconds = 0;
  double cpu_seconds = 0;  // the process's, over the run
  std::vector<Clock::duration> latencies;
};

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
}

// Runs one poster per channel, started together.
Run run_posters(BenchHub& bench, std::uint64_t ops) {
  const auto& channels = bench.channels();
  const auto posters = static_cast<unsigned>(channels.size());
  const std::vector<engine::FlexBytes> texts = text_pool();
  std::vector<std::vector<Clock::duration>> latencies(posters);
  std::vector<std::exception_ptr> errors(posters);
  std::atomic<bool> abort = false;
  std::latch start(posters + 1);
  std::vector<std::jthread> threads;
  for (unsigned p = 0; p < posters; ++p) {
    threads.emplace_back([&, p] {
      start.arrive_and_wait();
      try {
        latencies[p] = post_texts(bench.hub(), channels[p], texts,
                                  share_of(ops, posters, p), abort);
      } catch (...) {
        errors[p] = std::current_exception();
        abort = true;
      }
    });
  }
  start.arrive_and_wait();
  const double cpu_start = process_cpu_seconds();
  const Clock::time_point begin = Clock::now();
  for (std::jthread& thread : threads) thread.join();
  Run run{.seconds = seconds_since(begin),
          .cpu_seconds = process_cpu_seconds() - cpu_start};
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  run.latencies.reserve(ops);
  for (const auto& samples : latencies) {
    run.latencies.insert(run.latencies.end(), samples.begin(), samples.end());
  }
  return run;
}

// The pipelined poster's window. The poster counts a post in flight and a
// completion counts it out, without a lock; the mutex serves the poster's
// sleep, which a completion ends when the window has room again
// (kRefillAt) or empties.
struct Window {
  explicit Window(std::uint64_t ops) : started(ops) {}

  // Sleeps until `ready` holds; false if a post failed meanwhile.
  template <typename Ready>
  bool wait_for(const Ready& ready) {
    std::unique_lock lock(mutex);
    room.wait(lock, [&] { return ready() || failure; });
    return !failure;
  }

  // Post `i`, posted at started[i], was told `posted`: its latency replaces
  // its start. Completions run one at a time (the committer's rule), and
  // only they count posts out.
  void complete(std::uint64_t i, const engine::Result<std::string>& posted) {
    started[i] = Clock::time_point(Clock::now() - started[i]);
    if (!posted || in_flight == 1) {
      // A failure, or the last post in flight: counted out and told under
      // the mutex, since once the poster sees it the window may go.
      const std::lock_guard lock(mutex);
      if (!posted && !failure) {
        failure = posted.error();
        failed = true;
      }
      --in_flight;
      room.notify_one();
      return;
    }
    if (--in_flight == kRefillAt) {
      // Taking the mutex orders this with a poster between its check and
      // its sleep; notified after unlocking, so that the poster wakes to a
      // free mutex. Posts still in flight keep the window.
      { const std::lock_guard lock(mutex); }
      room.notify_one();
    }
  }

  std::atomic<std::size_t> in_flight = 0;
  std::atomic<bool> failed = false;  // failure is set
  std::mutex mutex;
  std::condition_variable room;          // on mutex
  std::optional<engine::Error> failure;  // guarded by mutex
  // Each post's start, then its latency (as a time since the epoch).
  std::vector<Clock::time_point> started;
};

// One thread keeps kPipelineDepth posts in flight through the
// completion-style post_envelope, post i on channel i % channels with the
// channel's senders alternating; the committer keeps each channel's posts
// in submission order. A completion captures two words, which
// std::function keeps in place: the poster allocates only the envelope.
Run run_pipelined(BenchHub& bench, std::uint64_t ops) {
  const auto& channels = bench.channels();
  const std::vector<engine::FlexBytes> texts = text_pool();
  Window window(ops);
  const double cpu_start = process_cpu_seconds();
  const Clock::time_point begin = Clock::now();
  for (std::uint64_t i = 0; i < ops && !window.failed; ++i) {
    if (window.in_flight == kPipelineDepth &&
        !window.wait_for([&] { return window.in_flight <= kRefillAt; })) {
      break;
    }
    ++window.in_flight;
    const BenchHub::Channel& channel = channels[i % channels.size()];
    engine::Envelope envelope;
    envelope.channel_id = channel.id;
    envelope.sender_id = channel.participants[(i / channels.size()) % 2];
    envelope.event_type = std::string(ev::kText);
    envelope.event_data = texts[i % texts.size()];
    window.started[i] = Clock::now();
    bench.hub().post_envelope(
        std::move(envelope),
        [window = &window, i](engine::Result<std::string> posted) {
          window->complete(i, posted);
        });
  }
  if (!window.wait_for([&] { return window.in_flight == 0; }) ||
      window.failed) {
    // Completions still running may touch the window.
    while (window.in_flight != 0) std::this_thread::yield();
    const std::lock_guard lock(window.mutex);
    throw BenchmarkError("post_envelope: " + window.failure->message);
  }
  Run run{.seconds = seconds_since(begin),
          .cpu_seconds = process_cpu_seconds() - cpu_start};
  run.latencies.reserve(ops);
  for (const Clock::time_point latency : window.started) {
    run.latencies.push_back(latency.time_since_epoch());
  }
  return run;
}

// Every channel folded exactly its texts; every text was delivered once.
void check_hub(BenchHub& bench, std::uint64_t ops) {
  const auto& channels = bench.channels();
  const auto posters = static_cast<unsigned>(channels.size());
  for (unsigned p = 0; p < posters; ++p) {
    auto state = value_or_throw(bench.hub().adapter_state(channels[p].id),
                                "adapter_state");
    const auto expected = static_cast<std::int64_t>(share_of(ops, posters, p));
    const json folded = state ? json::parse(*state) : json();
    if (!folded.is_object() ||
        folded.value("turn_count", std::int64_t{-1}) != expected) {
      throw BenchmarkError("channel " + channels[p].id + " folded to " +
                           folded.dump() + ", expected turn_count " +
                           std::to_string(expected));
    }
  }
  if (bench.text_deliveries() != ops) {
    throw BenchmarkError(std::to_string(bench.text_deliveries()) +
                         " texts delivered, expected " + std::to_string(ops));
  }
}

// log_ceiling_32: the envelope records post_sync_32t writes (its texts,
// senders, ids and timestamps), appended 32 at a time.
Measurement run_log_ceiling(std::uint64_t ops, const fs::path& base) {
  const std::vector<engine::FlexBytes> texts = text_pool();
  std::vector<std::string> channels;
  std::vector<std::string> senders;
  for (unsigned p = 0; p < kConcurrentPosters; ++p) {
    channels.push_back(engine::new_id());
    senders.push_back(engine::new_id());
  }
  engine::EnvelopeIdMinter minter;
  const engine::SystemClock clock;
  std::vector<log::AppendEntry> records;
  records.reserve(ops);
  for (std::uint64_t i = 0; i < ops; ++i) {
    const unsigned p = static_cast<unsigned>(i % kConcurrentPosters);
    engine::Envelope envelope;
    envelope.channel_id = channels[p];
    envelope.sender_id = senders[p];
    envelope.event_type = std::string(ev::kText);
    envelope.event_data = texts[(i / kConcurrentPosters) % texts.size()];
    envelope.envelope_id = minter.mint();
    envelope.created_at = engine::format_timestamp(clock.now());
    records.push_back({engine::envelope_record(envelope, false), channels[p]});
  }
  ScratchDir dir(base);
  const std::unique_ptr<log::LogStore> opened =
      open_bench_store(dir.path() / "store", log::Durability::kSync);
  log::LogStore& store = *opened;
  ::sync();
  const double load = load_average().value_or(-1);
  std::vector<Clock::duration> latencies;
  const double cpu_start = process_cpu_seconds();
  const Clock::time_point begin = Clock::now();
  for (std::uint64_t at = 0; at < ops; at += kConcurrentPosters) {
    const auto size = std::min<std::uint64_t>(kConcurrentPosters, ops - at);
    const Clock::time_point start = Clock::now();
    auto appended = store.append(std::span(records).subspan(at, size));
    latencies.push_back(Clock::now() - start);
    if (!appended) {
      throw BenchmarkError("append: " + appended.error().message);
    }
  }
  Measurement m{.name = "log_ceiling_32",
                .ops = ops,
                .seconds = seconds_since(begin),
                .cpu_seconds = process_cpu_seconds() - cpu_start};
  std::sort(latencies.begin(), latencies.end());
  m.p50_us = percentile_us(latencies, 0.50);
  m.p99_us = percentile_us(latencies, 0.99);
  m.note = "load " + json_number(load, "%.2f") +
           "; the most post_sync_32t can reach here; latencies per batch";
  m.extra = {{"records_per_batch", std::to_string(kConcurrentPosters)},
             {"load_average", json_number(load, "%.2f")}};
  return m;
}

Measurement run_scenario(const std::string& name, std::uint64_t ops,
                         const fs::path& base, unsigned pending_handshakes) {
  if (name == "log_ceiling_32") return run_log_ceiling(ops, base);
  const bool pipelined = name.starts_with("post_pipelined");
  const bool sync =
      name.starts_with("post_sync") || (pipelined && name.ends_with("_sync"));
  const unsigned posters =
      name.ends_with("_32t") || pipelined ? kConcurrentPosters : 1;
  ::sync();  // no writeback left over from earlier work slows the fsyncs
  BenchHub bench(base, sync ? log::Durability::kSync : log::Durability::kAsync,
                 posters, pending_handshakes);
  const double load = load_average().value_or(-1);
  Run run = pipelined ? run_pipelined(bench, ops) : run_posters(bench, ops);
  check_hub(bench, ops);
  bench.close();
  std::sort(run.latencies.begin(), run.latencies.end());
  Measurement m{.name = name,
                .ops = ops,
                .seconds = run.seconds,
                .p50_us = percentile_us(run.latencies, 0.50),
                .p99_us = percentile_us(run.latencies, 0.99),
                .cpu_seconds = run.cpu_seconds};
  const auto target = kTargets.find(name);
  const bool met =
      target == kTargets.end() || m.ops_per_sec() >= target->second;
  m.note = "load " + json_number(load, "%.2f") + "; target " +
           (target == kTargets.end() ? std::string("none")
                                     : json_number(target->second, "%.0f") +
                                           "/s " + (met ? "met" : "MISSED"));
  m.extra = {
      {"posters", pipelined ? "1" : std::to_string(posters)},
      {"in_flight", std::to_string(pipelined ? kPipelineDepth : posters)},
      {"load_average", json_number(load, "%.2f")},
      {"pending_handshakes", std::to_string(pending_handshakes)},
      {"target_ops_per_sec",
       target == kTargets.end() ? "null" : json_number(target->second, "%.0f")},
      {"target_met", target == kTargets.end() ? "null" : json_bool(met)}};
  return m;
}

struct Options {
  std::vector<std::string> scenarios = kScenarios;
  std::optional<std::uint64_t> num;  // overrides every scenario's default
  std::string json_path;
  fs::path dir = fs::temp_directory_path();
  unsigned pending_handshakes = 0;
};

void run(const Options& options) {
  std::printf(
      "Envelope:   ag2.msg.text, 40-239 byte texts, conversation "
      "channels, one per poster\n");
  if (postgres_uri.empty()) {
    std::printf("Directory:  %s\n", options.dir.c_str());
  } else {
    std::printf("PostgreSQL: %s\n", log::redact_location(postgres_uri).c_str());
  }
  std::printf(
      "CPU:        process CPU time over wall time, in %% of one "
      "core\n");
  std::printf("------------------------------------------------\n");
  std::fflush(stdout);
  std::vector<Measurement> measurements;
  for (const std::string& name : options.scenarios) {
    const std::uint64_t ops = options.num.value_or(kDefaultOps.at(name));
    measurements.push_back(
        run_scenario(name, ops, options.dir, options.pending_handshakes));
    print_line(measurements.back());
  }
  emit_summary(measurements, options.json_path);
}

std::string default_ops_help() {
  std::string help = "Posts per scenario (all posters together); default:";
  for (const std::string& name : kScenarios) {
    help += " " + name + "=" + std::to_string(kDefaultOps.at(name));
  }
  return help;
}

}  // namespace
}  // namespace parley::bench

int main(int argc, char** argv) {
  using parley::bench::kScenarios;
  parley::bench::Options options;
  CLI::App app{"Post throughput through engine::Hub::post_envelope"};
  app.add_option("--scenarios", options.scenarios,
                 "Comma-separated subset to run, in this order")
      ->delimiter(',')
      ->check(CLI::IsMember(kScenarios));
  std::uint64_t num = 0;
  app.add_option("--num", num, parley::bench::default_ops_help())
      ->check(CLI::PositiveNumber);
  app.add_option("--json", options.json_path,
                 "Also write the JSON summary to this file");
  app.add_option("--dir", options.dir,
                 "Where to create each scenario's temporary store")
      ->check(CLI::ExistingDirectory);
  app.add_option("--postgres", parley::bench::postgres_uri,
                 "Run on the PostgreSQL store in this database (a "
                 "postgresql:// URI) instead of RocksDB; its Parley store is "
                 "dropped before each scenario");
  app.add_option("--pending-handshakes", options.pending_handshakes,
                 "Before each post scenario, leave this many create_channel "
                 "calls waiting for an ack that never comes");
  CLI11_PARSE(app, argc, argv);
  if (app.count("--num") > 0) options.num = num;
  return parley::bench::run_reporting("parley-bench-post",
                                      [&] { parley::bench::run(options); });
}
