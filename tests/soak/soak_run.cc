#include "tests/soak/soak_run.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <thread>
#include <vector>

#include "engine/client/blocking.h"
#include "tests/sanitizer_build.h"
#include "tests/soak/process_probe.h"
#include "tests/soak/soak_server.h"
#include "tests/soak/soak_workload.h"
#include "tests/soak/spawned_process.h"
#include "tests/soak/throughput_probe.h"

namespace parley::soak {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr std::uint64_t kMemorySlackKib = 8 * 1024;
// The follower's slack includes its block cache (32 MiB at most,
// log/rocksdb_database.h), which fills as it reads and which it cannot
// report from another process.
constexpr std::uint64_t kFollowerSlackKib = (16 + 32) * 1024;
constexpr std::uint64_t kKibPerChannel = 4;
constexpr double kThroughputFloor = 0.5;

// Under AddressSanitizer (the `parley` the soak runs is built as it is)
// freed memory waits in a quarantine of up to 256 MiB and the heap is
// ASan's: memory is reported, not judged.
#if defined(PARLEY_TEST_UNDER_ASAN)
constexpr bool kMemoryJudged = false;
#else
constexpr bool kMemoryJudged = true;
#endif

struct Sample {
  double at = 0;  // seconds since the load started
  int generation = 0;
  bool steady = false;  // no restart since the previous sample
  double posts_per_second = 0;
  std::uint64_t serve_rss_kib = 0;
  std::uint64_t serve_heap_kib = 0;
  std::uint64_t serve_cache_kib = 0;  // of serve_heap_kib
  std::uint64_t follower_rss_kib = 0;
  std::uint64_t channels_created = 0;
  double registered_agents = 0;
  double active_channels = 0;
  double pending_inbox = 0;
};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The checks' verdicts, in order, and whether all held.
class Verdict {
 public:
  void check(bool held, const std::string& what) {
    if (!held) {
      ok_ = false;
      std::cerr << "parley-soak: FAILED: " << what << '\n';
    }
  }
  bool ok() const { return ok_; }

 private:
  bool ok_ = true;
};

// Runs `argv` to completion (up to 120 s), stdout into `out`; its exit
// code, -1 when it did not end.
int run_to_end(const std::vector<std::string>& argv, const fs::path& out,
               const fs::path& err) {
  SpawnedProcess process(argv, out, err);
  return process.wait_for(std::chrono::seconds(120)).value_or(-1);
}

// One generation's memory, from the steady samples of its second half
// (the memtables have filled and flushed by then): the server's heap
// without its log store's block cache (bounded, and filled by reads only
// after a restart) at its lowest (right after a flush, so a memtable's
// fill does not count) with the channels created by then, and the
// medians of the resident sets. nullopt without such samples.
struct GenerationMemory {
  std::uint64_t serve_heap_kib = 0;  // without the cache
  std::uint64_t channels = 0;        // created when the heap was lowest
  std::uint64_t serve_rss_kib = 0;
  std::uint64_t follower_rss_kib = 0;
};

std::optional<GenerationMemory> memory_of(const std::vector<Sample>& samples,
                                          int generation) {
  std::vector<const Sample*> steady;
  for (const Sample& sample : samples) {
    if (sample.generation == generation && sample.steady) {
      steady.push_back(&sample);
    }
  }
  if (steady.empty()) return std::nullopt;
  const std::span<const Sample* const> second_half(
      steady.begin() + static_cast<long>(steady.size() / 2), steady.end());
  const auto uncached = [](const Sample* sample) {
    return sample->serve_heap_kib -
           std::min(sample->serve_cache_kib, sample->serve_heap_kib);
  };
  const Sample* lowest = second_half.front();
  std::vector<double> serve, follower;
  for (const Sample* sample : second_half) {
    if (uncached(sample) < uncached(lowest)) lowest = sample;
    serve.push_back(static_cast<double>(sample->serve_rss_kib));
    follower.push_back(static_cast<double>(sample->follower_rss_kib));
  }
  return GenerationMemory{uncached(lowest), lowest->channels_created,
                          static_cast<std::uint64_t>(median(serve)),
                          static_cast<std::uint64_t>(median(follower))};
}

// Envelope id -> how often it is in `jsonl` (one envelope per line).
std::map<std::string, int> envelope_ids(const std::string& jsonl) {
  std::map<std::string, int> ids;
  std::istringstream lines(jsonl);
  for (std::string line; std::getline(lines, line);) {
    json envelope = json::parse(line, nullptr, false);
    if (envelope.is_object() && envelope.contains("envelope_id")) {
      ++ids[envelope["envelope_id"].get<std::string>()];
    }
  }
  return ids;
}

}  // namespace

int run_soak(const SoakOptions& options) {
  std::error_code ignored;
  fs::remove_all(options.dir, ignored);
  fs::create_directories(options.dir);
  SoakServer server(options.parley, options.dir, options.memtable_bytes);
  server.start(0);

  client::IoThread io;
  WorkloadOptions load;
  load.url = server.url();
  load.window = options.window;
  load.cycle_pause = std::chrono::milliseconds(options.cycle_pause_ms);
  load.log = [verbose = options.verbose](std::string_view line) {
    if (verbose) std::cerr << "client: " << line << '\n';
  };
  std::unique_ptr<Workload> workload = Workload::start(io.executor(), load);
  const std::string talk = workload->talk_channel();
  SpawnedProcess follower({options.parley, "log", "show", "--data",
                           server.store().string(), talk, "-f", "-o", "jsonl"},
                          options.dir / "follower.out",
                          options.dir / "follower.err");

  Verdict verdict;
  std::vector<Sample> samples;
  int generation = 0;
  const auto started = Clock::now();
  const auto end =
      started + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(options.seconds));
  const auto every = [](double seconds) {
    return std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(seconds));
  };
  auto next_sample = started + every(options.sample_every);
  auto next_restart = started + every(options.restart_every);
  // When the current restart's grace period ends; kNoRestart while none is
  // under way.
  constexpr auto kNoRestart = Clock::time_point::max();
  auto restarting_until = kNoRestart;
  bool restarted = false;
  std::uint64_t posts_before = 0;
  auto sampled_at = started;
  workload->run();

  while (Clock::now() < end) {
    std::this_thread::sleep_until(std::min({next_sample, next_restart, end}));
    const auto now = Clock::now();
    if (now >= next_restart) {
      next_restart += every(options.restart_every);
      if (next_restart < end) {
        workload->set_restarting(true);
        const auto code = server.stop();
        verdict.check(code == 0, "generation " + std::to_string(generation) +
                                     " of parley serve exited " +
                                     (code ? std::to_string(*code)
                                           : std::string("only when killed")));
        server.start(++generation);
        // Clients reconnect with a backoff of up to a few seconds.
        restarting_until = Clock::now() + std::chrono::seconds(5);
        restarted = true;
      }
    }
    if (Clock::now() >= restarting_until) {
      workload->set_restarting(false);
      restarting_until = kNoRestart;
    }
    if (Clock::now() < next_sample) continue;
    next_sample =
        std::max(next_sample, Clock::now()) + every(options.sample_every);
    const WorkloadCounts counts = workload->counts();
    const std::string metrics = server.metrics();
    Sample sample;
    sample.at = std::chrono::duration<double>(Clock::now() - started).count();
    sample.generation = generation;
    sample.steady = !restarted && restarting_until == kNoRestart;
    sample.posts_per_second =
        static_cast<double>(counts.talk_posts - posts_before) /
        std::chrono::duration<double>(Clock::now() - sampled_at).count();
    sample.serve_rss_kib = server.rss_kib().value_or(0);
    sample.serve_heap_kib = static_cast<std::uint64_t>(
        metric(metrics, "parley_heap_allocated_bytes").value_or(0) / 1024);
    sample.serve_cache_kib = static_cast<std::uint64_t>(
        metric(metrics, "parley_log_cache_bytes").value_or(0) / 1024);
    sample.follower_rss_kib = soak::rss_kib(follower.pid()).value_or(0);
    sample.channels_created = counts.channels_created;
    sample.registered_agents =
        metric(metrics, "parley_hub_registered_agents").value_or(-1);
    sample.active_channels =
        metric(metrics, "parley_hub_active_channels").value_or(-1);
    sample.pending_inbox =
        metric(metrics, "parley_hub_pending_inbox_total").value_or(-1);
    posts_before = counts.talk_posts;
    sampled_at = Clock::now();
    restarted = false;
    samples.push_back(sample);
    std::fprintf(
        stderr,
        "t=%.0fs gen=%d%s posts/s=%.0f serve_heap=%.1fMiB "
        "(cache %.1fMiB) serve_rss=%.1fMiB "
        "follower_rss=%.1fMiB channels=%llu active=%.0f agents=%.0f "
        "pending=%.0f failures=%llu/%llu\n",
        sample.at, sample.generation, sample.steady ? "" : " (restart)",
        sample.posts_per_second, sample.serve_heap_kib / 1024.0,
        sample.serve_cache_kib / 1024.0, sample.serve_rss_kib / 1024.0,
        sample.follower_rss_kib / 1024.0,
        static_cast<unsigned long long>(sample.channels_created),
        sample.active_channels, sample.registered_agents, sample.pending_inbox,
        static_cast<unsigned long long>(counts.unexpected_failures),
        static_cast<unsigned long long>(counts.expected_failures));
  }

  // The load stops; what is in flight finishes and every receipt lands.
  verdict.check(workload->stop(std::chrono::seconds(30)),
                "calls still in flight 30 s after the load stopped");
  const WorkloadCounts counts = workload->counts();
  double pending = -1;
  double agents = -1;
  for (auto deadline = Clock::now() + std::chrono::seconds(10);
       Clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    const std::string metrics = server.metrics();
    pending = metric(metrics, "parley_hub_pending_inbox_total").value_or(-1);
    agents = metric(metrics, "parley_hub_registered_agents").value_or(-1);
    if (agents >= 0 && agents <= counts.agents_registered) break;
  }
  const std::vector<std::string> acked = workload->acked_talk_ids();
  const std::vector<std::string> unexpected = workload->unexpected();
  workload.reset();

  // What the follower printed must be what a fresh read prints (the talk
  // conversation has its last post: the load is over).
  const fs::path fresh_file = options.dir / "fresh.out";
  const int shown = run_to_end({options.parley, "log", "show", "--data",
                                server.store().string(), talk, "-o", "jsonl"},
                               fresh_file, options.dir / "fresh.err");
  verdict.check(shown == 0, "parley log show of the talk channel failed");
  const std::string fresh = read_text_file(fresh_file);
  const fs::path follower_file = options.dir / "follower.out";
  for (auto deadline = Clock::now() + std::chrono::seconds(60);
       Clock::now() < deadline &&
       read_text_file(follower_file).size() < fresh.size();) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  follower.signal(SIGTERM);
  const auto follower_code = follower.wait_for(std::chrono::seconds(10));
  verdict.check(follower_code == 0, "parley log show -f did not exit 0");
  const bool follower_matches = read_text_file(follower_file) == fresh;
  verdict.check(follower_matches,
                "the follower's output differs from a fresh read (" +
                    follower_file.string() + ", " + fresh_file.string() + ")");

  // Throughput: the soaked server, still running, against a fresh one.
  fs::create_directories(options.dir / "fresh");
  SoakServer fresh_server(options.parley, options.dir / "fresh",
                          options.memtable_bytes);
  fresh_server.start(0);
  ProbeOptions probe;
  probe.pairs = options.probe_pairs;
  probe.round = std::chrono::milliseconds(
      static_cast<std::int64_t>(options.probe_seconds * 1000));
  probe.load = load;
  const ProbeRates probed =
      probe_throughput(io.executor(), server.url(), fresh_server.url(), probe);
  for (const std::string& failure : probed.failures) {
    std::cerr << "  probe " << failure << '\n';
  }
  verdict.check(probed.failures.empty(),
                std::to_string(probed.failures.size()) +
                    " calls failed in the throughput rounds");
  const double soaked_rate = median(probed.soaked);
  const double fresh_rate = median(probed.fresh);
  std::fprintf(stderr,
               "throughput: soaked %.0f posts/s, fresh %.0f posts/s (medians "
               "of %zu rounds each)\n",
               soaked_rate, fresh_rate, probed.soaked.size());
  verdict.check(soaked_rate >= kThroughputFloor * fresh_rate,
                "throughput decayed: the soaked hub posts at " +
                    std::to_string(soaked_rate) + "/s, a fresh one at " +
                    std::to_string(fresh_rate) + "/s");
  verdict.check(fresh_server.stop() == 0,
                "the fresh parley serve did not exit 0");
  verdict.check(server.stop() == 0, "the last parley serve did not exit 0");

  // Nothing acked lost, nothing twice.
  const std::map<std::string, int> logged = envelope_ids(fresh);
  std::uint64_t lost = 0;
  std::uint64_t duplicated = 0;
  for (const std::string& id : acked) {
    const auto found = logged.find(id);
    if (found == logged.end()) ++lost;
  }
  for (const auto& [id, times] : logged) {
    if (times > 1) ++duplicated;
  }
  verdict.check(lost == 0, std::to_string(lost) + " acked talk posts lost");
  verdict.check(duplicated == 0,
                std::to_string(duplicated) + " envelopes logged twice");
  verdict.check(counts.unexpected_failures == 0,
                std::to_string(counts.unexpected_failures) +
                    " calls failed outside a restart");
  for (const std::string& failure : unexpected) {
    std::cerr << "  " << failure << '\n';
  }

  const int audit =
      run_to_end({options.parley, "audit", "--data", server.store().string()},
                 options.dir / "audit.out", options.dir / "audit.err");
  verdict.check(audit == 0, "parley audit did not find the store clean (" +
                                (options.dir / "audit.out").string() + ")");

  // The rate while the load ran is reported, not judged: it follows the
  // machine (tests/soak/throughput_probe.h); the probe above judges.
  std::vector<double> rates;
  for (const Sample& sample : samples) {
    if (sample.steady) rates.push_back(sample.posts_per_second);
  }
  const std::size_t third = rates.size() / 3;
  const double first_rate =
      median({rates.begin(), rates.begin() + static_cast<long>(third)});
  const double last_rate =
      median({rates.end() - static_cast<long>(third), rates.end()});

  // Memory: the first generation's steady state against the last one's.
  const auto first = memory_of(samples, 0);
  const auto last = memory_of(samples, generation);
  verdict.check(first && last, "no steady memory samples");
  std::int64_t serve_growth = 0;
  std::int64_t heap_growth = 0;
  std::int64_t follower_growth = 0;
  std::uint64_t allowed = 0;
  std::uint64_t follower_allowed = 0;
  if (first && last) {
    serve_growth = static_cast<std::int64_t>(last->serve_rss_kib) -
                   static_cast<std::int64_t>(first->serve_rss_kib);
    heap_growth = static_cast<std::int64_t>(last->serve_heap_kib) -
                  static_cast<std::int64_t>(first->serve_heap_kib);
    follower_growth = static_cast<std::int64_t>(last->follower_rss_kib) -
                      static_cast<std::int64_t>(first->follower_rss_kib);
    const std::uint64_t channels = last->channels - first->channels;
    allowed = kMemorySlackKib + kKibPerChannel * channels;
    follower_allowed = kFollowerSlackKib + kKibPerChannel * channels;
  }
  if (kMemoryJudged) {
    verdict.check(heap_growth <= static_cast<std::int64_t>(allowed),
                  "the server's heap grew by " + std::to_string(heap_growth) +
                      " KiB (allowed " + std::to_string(allowed) + ")");
    verdict.check(
        follower_growth <= static_cast<std::int64_t>(follower_allowed),
        "the follower's memory grew by " + std::to_string(follower_growth) +
            " KiB (allowed " + std::to_string(follower_allowed) + ")");
  }
  verdict.check(
      agents >= 3 && agents <= static_cast<double>(counts.agents_registered),
      "the hub counts " + std::to_string(agents) +
          " registered agents, the workload left " +
          std::to_string(counts.agents_registered));

  json summary = {{"seconds", options.seconds},
                  {"generations", generation + 1},
                  {"talk_posts", counts.talk_posts},
                  {"posts_per_second_first", first_rate},
                  {"posts_per_second_last", last_rate},
                  {"probe_soaked_posts_per_second", probed.soaked},
                  {"probe_fresh_posts_per_second", probed.fresh},
                  {"channels_created", counts.channels_created},
                  {"ttl_closes_seen", counts.ttl_closes_seen},
                  {"serve_rss_kib_first", first ? first->serve_rss_kib : 0},
                  {"serve_rss_kib_last", last ? last->serve_rss_kib : 0},
                  {"serve_rss_growth_kib", serve_growth},
                  {"serve_heap_kib_first", first ? first->serve_heap_kib : 0},
                  {"serve_heap_kib_last", last ? last->serve_heap_kib : 0},
                  {"serve_heap_growth_kib", heap_growth},
                  {"serve_heap_growth_allowed_kib", allowed},
                  {"memory_judged", kMemoryJudged},
                  {"follower_rss_growth_kib", follower_growth},
                  {"follower_rss_growth_allowed_kib", follower_allowed},
                  {"registered_agents_end", agents},
                  {"pending_inbox_end", pending},
                  {"expected_failures", counts.expected_failures},
                  {"unexpected_failures", counts.unexpected_failures},
                  {"lost", lost},
                  {"duplicated", duplicated},
                  {"follower_matches", follower_matches},
                  {"audit_clean", audit == 0},
                  {"ok", verdict.ok()}};
  json cycles = json::object();
  for (std::size_t kind = 0; kind < kCycleKinds; ++kind) {
    cycles[std::string(cycle_name(static_cast<CycleKind>(kind)))] =
        counts.cycles[kind];
  }
  summary["cycles"] = cycles;
  std::cout << summary.dump() << std::endl;
  return verdict.ok() ? 0 : 1;
}

}  // namespace parley::soak
