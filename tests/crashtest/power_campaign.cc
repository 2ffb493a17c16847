#include "tests/crashtest/power_campaign.h"

#include <rocksdb/env.h>

#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "engine/state/hub_state.h"
#include "log/rocksdb_log_store.h"
#include "replay/folded_store.h"
#include "replay/state_hash.h"
#include "tests/crashtest/crash_driver.h"
#include "tests/crashtest/power_cut_fs.h"
#include "tests/crashtest/record_token.h"
#include "tests/crashtest/store_check.h"

namespace parley::crashtest {

namespace {

namespace fs = std::filesystem;

// A checked store is retried with so many idempotent posts per trial.
constexpr int kRetriesPerTrial = 3;
constexpr std::size_t kWriteBufferSizes[] = {0, 64 << 10, 256 << 10};
// Power cuts come within this long after the driver starts.
constexpr std::int64_t kMaxCutMicros = 300000;
// Or after at most this many appends to files.
constexpr std::int64_t kMaxCutAppends = 200;

class PowerCampaign {
 public:
  PowerCampaign(const CampaignOptions& options, log::Durability durability)
      : options_(options), durability_(durability), random_(options.seed) {}

  CampaignTotals run() {
    fs::remove_all(options_.data);
    fs::create_directories(options_.data);
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
  bool sync() const { return durability_ == log::Durability::kSync; }
  // The self-test "unsynced-acks" drives the hub with async durability and
  // checks it as if it were sync: acknowledged records must go missing.
  log::Durability driver_durability() const {
    return options_.inject == "unsynced-acks" ? log::Durability::kAsync
                                              : durability_;
  }

  void new_store() {
    finish_store();
    history_ = std::make_unique<StoreHistory>();
    history_->dir = options_.data / ("store-" + std::to_string(totals_.stores));
    ++totals_.stores;
    generation_in_store_ = 0;
  }

  void finish_store() {
    if (!history_) return;
    totals_.acked_ops += acked_;
    totals_.records += records_;
    totals_.lost += lost_;
    totals_.duplicated += duplicated_;
    totals_.out_of_order += out_of_order_;
    if (!failed_store_) fs::remove_all(history_->dir);
    acked_ = records_ = lost_ = duplicated_ = out_of_order_ = 0;
    failed_store_ = false;
  }

  void problem(const std::string& what, std::uint64_t& counter) {
    ++counter;
    failed_store_ = true;
    if (reported_++ < 50) {
      std::cerr << "parley-crashtest: power trial " << totals_.trials << " ("
                << history_->dir.filename().string() << "): " << what << "\n";
    }
  }

  // What the driver reported, gathered from its thread.
  struct Seen {
    std::mutex mutex;
    std::string output;
    bool ready = false;
  };

  void trial() {
    ++totals_.trials;
    ++totals_.power_cuts;
    ++generation_in_store_;
    auto file_system = std::make_shared<PowerCutFileSystem>();
    std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(file_system);
    std::atomic<bool> stop = false;
    Seen seen;
    std::vector<std::string> live;  // the hub's log when it stopped
    bool live_read = false;
    DriverOptions driver{
        .data = history_->dir,
        .generation = static_cast<int>(totals_.trials),
        .seed = random_(),
        .clock_micros = history_->clock_micros,
        .sink =
            [&](std::string_view line) {
              std::lock_guard lock(seen.mutex);
              seen.output.append(line);
              seen.output.push_back('\n');
            },
        .env = env.get(),
        .durability = driver_durability(),
        // Small memtables flush and compact often, so cuts also land while
        // table files, the MANIFEST and CURRENT are written.
        .write_buffer_size =
            kWriteBufferSizes[std::uniform_int_distribution(0, 2)(random_)],
        .stop = &stop,
        .before_close =
            [&](const log::LogStore& store) {
              live_read =
                  store
                      .read(1, log::kLastSequence,
                            [&](std::uint64_t, std::string_view record) {
                              live.emplace_back(record);
                              return true;
                            })
                      .has_value();
            },
    };
    // Half the cuts come after a random number of file appends, most
    // often between a write and its sync; the others at a random time.
    const bool after_appends = std::bernoulli_distribution(0.5)(random_);
    if (after_appends) {
      file_system->cut_after_appends(
          std::uniform_int_distribution<std::int64_t>(1,
                                                      kMaxCutAppends)(random_));
    }
    std::thread driving([&] { (void)run_driver(driver); });
    const auto deadline =
        std::chrono::steady_clock::now() +
        std::chrono::microseconds(
            after_appends ? kMaxCutMicros
                          : std::uniform_int_distribution<std::int64_t>(
                                0, kMaxCutMicros)(random_));
    while (!file_system->down() &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    file_system->cut();
    stop = true;
    driving.join();
    env.reset();
    const PowerCutFileSystem::Losses losses =
        file_system->restore_power(random_);
    totals_.files_removed += losses.files_removed;
    totals_.renames_undone += losses.renames_undone;
    totals_.files_cut += losses.files_cut;
    totals_.files_torn += losses.files_torn;
    totals_.bytes_dropped += losses.bytes_dropped;

    const ChildReport report = parse_child_output(seen.output);
    if (!report.saw("ready")) ++totals_.cut_before_ready;
    if (report.clock_micros) history_->clock_micros = report.clock_micros;
    std::vector<AckedToken> acks = report.acks;
    std::vector<std::string> survivors;
    if (!check_prefix(live_read ? &live : nullptr, survivors)) return;
    if (!sync()) keep_surviving_acks(acks, survivors);
    history_->generations.push_back(std::move(acks));
    if (sync()) {
      history_->idempotent.insert(history_->idempotent.end(),
                                  report.idempotent.begin(),
                                  report.idempotent.end());
    }
    StoreCheck check = check_store(*history_, std::nullopt, options_.parley,
                                   sync() ? kRetriesPerTrial : 0, random_);
    totals_.idempotent_retries += check.idempotent_retries;
    acked_ = check.acked;
    records_ = check.records;
    for (const std::string& what : check.problems) {
      if (reported_++ < 50) {
        std::cerr << "parley-crashtest: power trial " << totals_.trials << ": "
                  << what << "\n";
      }
    }
    if (check.audit_failures || check.lost || check.duplicated ||
        check.out_of_order) {
      failed_store_ = true;
    }
    totals_.audit_failures += check.audit_failures;
    // The store's acks are checked again after every cut; the last check
    // holds them all.
    lost_ = std::max(lost_, check.lost);
    duplicated_ = std::max(duplicated_, check.duplicated);
    out_of_order_ = std::max(out_of_order_, check.out_of_order);
    for (const std::string& what : report.violations) {
      problem("the driver saw: " + what, totals_.duplicated);
    }
    if (!check.opened) history_.reset();
  }

  // Reopens the store: it must hold a prefix of `live` (when the hub got
  // that far), record for record, possibly followed by records the hub
  // wrote but saw fail (their sync failed, their bytes survived: never
  // acknowledged, counted as unacked_survivors); folding the prefix must
  // give the state hash of folding that prefix of the hub's log. Fills
  // `survivors` with the tokens of what it holds.
  bool check_prefix(const std::vector<std::string>* live,
                    std::vector<std::string>& survivors) {
    PrefixCheck check = crashtest::check_prefix(history_->dir, live);
    for (const std::string& what : check.problems) {
      problem("after the power cut " + what, totals_.audit_failures);
    }
    if (!check.opened) {
      history_.reset();
      return false;
    }
    totals_.torn_tails += check.torn_tail ? 1 : 0;
    totals_.unacked_survivors += check.beyond;
    totals_.records_dropped += check.dropped;
    survivors = std::move(check.survivors);
    return check.read_back;
  }

  // Async durability: drops the acks that did not survive, after checking
  // that, per stream, no ack survives behind one that was lost.
  void keep_surviving_acks(std::vector<AckedToken>& acks,
                           const std::vector<std::string>& survivors) {
    std::map<std::string, int> present;
    for (const std::string& token : survivors) ++present[token];
    std::map<char, bool> lost_in_stream;
    std::vector<AckedToken> kept;
    for (AckedToken& ack : acks) {
      if (present.contains(ack.token)) {
        if (lost_in_stream[ack.stream]) {
          problem("acked " + ack.token +
                      " survived the power cut while an earlier ack of "
                      "its stream did not",
                  totals_.audit_failures);
        }
        kept.push_back(std::move(ack));
      } else {
        lost_in_stream[ack.stream] = true;
        ++totals_.acked_dropped;
      }
    }
    acks = std::move(kept);
  }

  const CampaignOptions options_;
  const log::Durability durability_;
  std::mt19937_64 random_;
  CampaignTotals totals_;
  std::unique_ptr<StoreHistory> history_;
  int generation_in_store_ = 0;
  std::uint64_t acked_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t lost_ = 0;
  std::uint64_t duplicated_ = 0;
  std::uint64_t out_of_order_ = 0;
  bool failed_store_ = false;
  int reported_ = 0;
};

}  // namespace

CampaignTotals run_power_campaign(const CampaignOptions& options,
                                  log::Durability durability) {
  PowerCampaign campaign(options, durability);
  return campaign.run();
}

}  // namespace parley::crashtest
