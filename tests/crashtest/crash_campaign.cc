#include "tests/crashtest/crash_campaign.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "log/rocksdb_log_store.h"
#include "replay/ag2_import.h"
#include "replay/folded_store.h"
#include "replay/state_hash.h"
#include "tests/crashtest/child_process.h"
#include "tests/crashtest/store_check.h"

namespace parley::crashtest {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr int kRetriesPerTrial = 3;
// How long after a sweep starts a kill aimed at it may come.
constexpr double kSweepMicros = 2000;
constexpr auto kChildDeadline = std::chrono::seconds(60);

std::function<bool(const std::string&)> has_line(const std::string& line,
                                                 std::size_t times = 1) {
  return [needle = line + "\n", times](const std::string& output) {
    std::size_t found = 0;
    for (std::size_t at = output.find(needle); at != std::string::npos;
         at = output.find(needle, at + 1)) {
      if (++found == times) return true;
    }
    return false;
  };
}

// A running average of how long something takes, for aiming kills.
struct Duration {
  double micros = 20000;
  void add(Clock::duration seen) {
    micros = 0.8 * micros +
             0.2 * std::chrono::duration_cast<microseconds>(seen).count();
  }
};

class Campaign {
 public:
  explicit Campaign(const CampaignOptions& options)
      : options_(options), random_(options.seed) {}

  CampaignTotals run() {
    fs::remove_all(options_.data);
    fs::create_directories(options_.data);
    if (!options_.ag2.empty()) reference_import();
    while (totals_.trials < static_cast<std::uint64_t>(options_.trials)) {
      if (!history_ || generation_in_store_ >= options_.generations_per_store) {
        new_store();
      }
      trial();
    }
    finish_store();
    return totals_;
  }

 private:
  int roll(int n) { return std::uniform_int_distribution(0, n - 1)(random_); }
  microseconds up_to(double micros) {
    return microseconds(std::uniform_int_distribution<std::int64_t>(
        0, static_cast<std::int64_t>(micros))(random_));
  }

  // The state an import of the AG2 store gives, to compare killed imports
  // with.
  void reference_import() {
    const fs::path dir = options_.data / "reference-import";
    auto opened = log::open_rocksdb_log_store(dir);
    if (!opened) throw std::runtime_error(opened.error().message);
    auto imported = replay::import_ag2(options_.ag2, *opened->store);
    if (!imported) throw std::runtime_error(imported.error().message);
    auto folded = replay::FoldedStore::fold(*opened->store);
    if (!folded) throw std::runtime_error(folded.error().message);
    import_hash_ = replay::store_state_hash((*folded)->state());
    import_records_ = opened->store->last_sequence();
  }

  void new_store() {
    finish_store();
    history_ = std::make_unique<StoreHistory>();
    history_->dir = options_.data / ("store-" + std::to_string(totals_.stores));
    ++totals_.stores;
    generation_in_store_ = 0;
    if (!options_.ag2.empty() && roll(3) == 0) import_trial();
  }

  // Adds the store's final figures (its acks are checked again after every
  // kill, so the last check holds the most) to the totals, then removes it.
  void finish_store() {
    if (!history_) return;
    totals_.acked_ops += store_.acked;
    totals_.lost += store_.lost;
    totals_.duplicated += store_.duplicated;
    totals_.out_of_order += store_.out_of_order;
    totals_.records += store_.records;
    if (!store_.lost && !store_.duplicated && !store_.out_of_order) {
      fs::remove_all(history_->dir);
    }
    store_ = {};
  }

  // `parley import-ag2` into the fresh store, killed at a random moment:
  // the store then holds nothing or the whole import.
  void import_trial() {
    ++totals_.trials;
    ++totals_.imports;
    ++generation_in_store_;
    ChildProcess import({options_.parley.string(), "import-ag2", "--data",
                         history_->dir.string(), options_.ag2.string()},
                        options_.data / "import.err");
    const auto started = Clock::now();
    std::this_thread::sleep_for(up_to(1.5 * import_duration_.micros));
    import.signal(SIGKILL);
    import.drain(Clock::now() + kChildDeadline);
    const int status = import.wait();
    if (WIFSIGNALED(status)) {
      ++totals_.killed_in_import;
      // Aim later next time, so that some imports finish.
      import_duration_.micros *= 1.3;
    } else {
      import_duration_.add(Clock::now() - started);
    }
    if (!fs::exists(history_->dir)) return;
    auto opened = log::open_rocksdb_log_store(history_->dir);
    if (!opened) {
      problem("after a killed import the store does not open: " +
              opened.error().message);
      return;
    }
    const std::uint64_t records = opened->store->last_sequence();
    if (records == 0) return;
    auto folded = replay::FoldedStore::fold(*opened->store);
    if (records != import_records_ || !folded ||
        replay::store_state_hash((*folded)->state()) != import_hash_) {
      problem("a killed import left " + std::to_string(records) +
              " records, not 0 or the whole import (" +
              std::to_string(import_records_) + ")");
    }
  }

  void problem(const std::string& what) {
    ++totals_.audit_failures;
    report(what);
  }

  void report(const std::string& what) {
    if (reported_++ < 50) {
      std::cerr << "parley-crashtest: trial " << totals_.trials << " ("
                << history_->dir.filename().string() << "): " << what << "\n";
    }
  }

  enum class KillAt { kAnyTime, kHydrate, kSweep };

  void trial() {
    ++totals_.trials;
    ++generation_in_store_;
    const int mode_roll = roll(100);
    const KillAt kill_at = mode_roll < 15   ? KillAt::kHydrate
                           : mode_roll < 35 ? KillAt::kSweep
                                            : KillAt::kAnyTime;
    std::optional<ChildProcess> follower;
    std::string followed;
    if (!history_->followed_channel.empty() && roll(3) == 0) {
      followed = history_->followed_channel;
      follower.emplace(
          std::vector<std::string>{options_.parley.string(), "log", "show",
                                   "--data", history_->dir.string(), followed,
                                   "-f", "-o", "jsonl"},
          options_.data / "follower.err");
      ++totals_.followed;
    }
    std::vector<std::string> argv = {options_.self.string(),
                                     "--child",
                                     "--data",
                                     history_->dir.string(),
                                     "--generation",
                                     std::to_string(totals_.trials),
                                     "--seed",
                                     std::to_string(random_()),
                                     "--clock",
                                     std::to_string(history_->clock_micros)};
    if (!options_.inject.empty()) {
      argv.push_back("--inject");
      argv.push_back(options_.inject);
    }
    ChildProcess child(argv, options_.data / "child.err");
    const auto deadline = Clock::now() + kChildDeadline;
    bool ready = false;
    if (kill_at == KillAt::kHydrate) {
      child.read_until(has_line("phase hydrating"), deadline);
      std::this_thread::sleep_for(up_to(1.2 * hydrate_duration_.micros));
      child.signal(SIGKILL);
    } else {
      child.read_until(has_line("phase hydrating"), deadline);
      const auto hydrating = Clock::now();
      ready = child.read_until(has_line("phase ready"), deadline);
      if (ready) hydrate_duration_.add(Clock::now() - hydrating);
      if (kill_at == KillAt::kSweep) {
        const std::size_t nth = 1 + static_cast<std::size_t>(roll(3));
        child.read_until(has_line("phase sweep-begin", nth), deadline);
        std::this_thread::sleep_for(up_to(kSweepMicros));
      } else {
        child.read_until([](const std::string&) { return false; },
                         Clock::now() + up_to(250000));
      }
      child.signal(SIGKILL);
    }
    child.drain(deadline);
    const int status = child.wait();
    const ChildReport seen = parse_child_output(child.output());
    if (!WIFSIGNALED(status)) {
      problem("the child ended by itself with status " +
              std::to_string(status) + " (see child.err)");
    }
    count_kill_moment(seen);
    learn(seen);

    std::optional<FollowerRun> followed_run;
    if (follower) {
      // Give the follower a poll or two to catch up, then stop it.
      std::this_thread::sleep_for(milliseconds(250));
      follower->signal(SIGTERM);
      follower->drain(Clock::now() + kChildDeadline);
      followed_run = FollowerRun{
          .channel = followed,
          .output = follower->output(),
          .status = follower->wait(),
      };
    }
    StoreCheck check = check_store(*history_, followed_run, options_.parley,
                                   kRetriesPerTrial, random_);
    totals_.audit_failures += check.audit_failures;
    totals_.followed_envelopes += check.followed_envelopes;
    totals_.idempotent_retries += check.idempotent_retries;
    totals_.torn_tails += check.torn_tail ? 1 : 0;
    for (const std::string& what : check.problems) report(what);
    for (const std::string& what : seen.violations) {
      ++totals_.duplicated;
      report("the child saw: " + what);
    }
    store_.acked = check.acked;
    store_.records = check.records;
    store_.lost = std::max(store_.lost, check.lost);
    store_.duplicated = std::max(store_.duplicated, check.duplicated);
    store_.out_of_order = std::max(store_.out_of_order, check.out_of_order);
    if (options_.verbose) {
      std::cerr << "trial " << totals_.trials << " "
                << history_->dir.filename().string() << " acks "
                << seen.acks.size() << " records " << check.records
                << (ready ? "" : " (killed before ready)") << "\n";
    }
    if (!check.opened) history_.reset();  // go on with a fresh store
  }

  void count_kill_moment(const ChildReport& seen) {
    if (seen.saw("hydrating") && !seen.saw("ready")) {
      ++totals_.killed_in_hydrate;
    }
    const std::size_t begun = seen.count("sweep-begin");
    if (begun > seen.count("sweep-end")) ++totals_.killed_in_sweep;
  }

  void learn(const ChildReport& seen) {
    history_->generations.push_back(seen.acks);
    history_->idempotent.insert(history_->idempotent.end(),
                                seen.idempotent.begin(), seen.idempotent.end());
    if (seen.clock_micros) history_->clock_micros = seen.clock_micros;
    if (history_->followed_channel.empty()) {
      for (const AckedToken& ack : seen.acks) {
        if (ack.token.starts_with("chan:")) {
          history_->followed_channel = ack.token.substr(5);
          break;
        }
      }
    }
  }

  struct StoreFigures {
    std::uint64_t acked = 0;
    std::uint64_t records = 0;
    std::uint64_t lost = 0;
    std::uint64_t duplicated = 0;
    std::uint64_t out_of_order = 0;
  };

  const CampaignOptions options_;
  std::mt19937_64 random_;
  CampaignTotals totals_;
  std::unique_ptr<StoreHistory> history_;
  StoreFigures store_;
  int generation_in_store_ = 0;
  Duration hydrate_duration_;
  Duration import_duration_{.micros = 100000};
  std::uint64_t import_hash_ = 0;
  std::uint64_t import_records_ = 0;
  int reported_ = 0;
};

}  // namespace

CampaignTotals run_campaign(const CampaignOptions& options) {
  Campaign campaign(options);
  return campaign.run();
}

std::string totals_json(const CampaignTotals& totals, bool power) {
  const std::pair<const char*, std::uint64_t> fields[] = {
      {"trials", totals.trials},
      {"acked_ops", totals.acked_ops},
      {"lost", totals.lost},
      {"duplicated", totals.duplicated},
      {"audit_failures", totals.audit_failures},
      {"out_of_order", totals.out_of_order},
      {"records", totals.records},
      {"stores", totals.stores},
      {"killed_in_hydrate", totals.killed_in_hydrate},
      {"killed_in_sweep", totals.killed_in_sweep},
      {"imports", totals.imports},
      {"killed_in_import", totals.killed_in_import},
      {"followed", totals.followed},
      {"followed_envelopes", totals.followed_envelopes},
      {"torn_tails", totals.torn_tails},
      {"idempotent_retries", totals.idempotent_retries},
  };
  const std::pair<const char*, std::uint64_t> power_fields[] = {
      {"power_cuts", totals.power_cuts},
      {"cut_before_ready", totals.cut_before_ready},
      {"records_dropped", totals.records_dropped},
      {"acked_dropped", totals.acked_dropped},
      {"unacked_survivors", totals.unacked_survivors},
      {"files_removed", totals.files_removed},
      {"renames_undone", totals.renames_undone},
      {"files_cut", totals.files_cut},
      {"files_torn", totals.files_torn},
      {"bytes_dropped", totals.bytes_dropped},
  };
  std::string out = "{";
  auto add = [&](const char* name, std::uint64_t value) {
    if (out.size() > 1) out += ", ";
    out += "\"" + std::string(name) + "\": " + std::to_string(value);
  };
  for (const auto& [name, value] : fields) add(name, value);
  if (power) {
    for (const auto& [name, value] : power_fields) add(name, value);
  }
  return out + "}";
}

}  // namespace parley::crashtest
