#include "tests/crashtest/fault_campaign.h"

#include <rocksdb/env.h>
#include <sys/wait.h>

#include <chrono>
#include <iostream>
#include <limits>
#include <random>
#include <set>

#include "engine/hub/hub.h"
#include "log/rocksdb_log_store.h"
#include "tests/crashtest/child_process.h"
#include "tests/crashtest/crash_driver.h"
#include "tests/crashtest/power_cut_fs.h"
#include "tests/crashtest/record_token.h"
#include "tests/crashtest/store_check.h"

namespace parley::crashtest {

namespace {

namespace fs = std::filesystem;

constexpr int kRetriesPerTrial = 3;
constexpr std::size_t kWriteBufferSizes[] = {0, 64 << 10, 256 << 10};
// A trial whose fault never stops the hub ends after this many ops.
constexpr std::int64_t kMaxOps = 300;
// Ops driven after the hub stops with the fault still there, then after
// the fault clears (space freed, the disk healthy again).
constexpr std::int64_t kOpsWhileFaulty = 10;
constexpr std::int64_t kOpsAfterClearing = 20;
constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The README's words for a hub that stopped accepting changes.
constexpr std::string_view kFullDisk = "once space is freed";
constexpr std::string_view kReopen = "reopen it";

class FaultCampaign {
 public:
  explicit FaultCampaign(const CampaignOptions& options)
      : options_(options), random_(options.seed) {}

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
  // What one trial has seen so far, on the driver's thread.
  struct Trial {
    IoFault fault;
    bool at_hydrate = false;
    std::string output;  // every line the driver sent
    std::set<std::string> acked;
    std::int64_t ops = 0;
    std::optional<std::string> stopped;  // the hub's failure, once seen
    std::int64_t stopped_at = -1;        // the op count then
    bool fatal = false;                  // stopped, refusing until reopened
    bool fatal_at_op_start = false;
    std::int64_t cleared_at = -1;  // the op count when the fault cleared
    bool resumed = false;
  };

  int roll(int n) { return std::uniform_int_distribution(0, n - 1)(random_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(random_); }

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
      std::cerr << "parley-crashtest: fault trial " << totals_.trials << " ("
                << history_->dir.filename().string() << ", "
                << describe(trial_.fault) << "): " << what << "\n";
    }
  }

  static std::string describe(const IoFault& fault) {
    std::string out =
        std::string(to_string(fault.kind)) + " on " + ops_name(fault.ops) + " ";
    out += fault.nth > 0 ? "at call " + std::to_string(fault.nth)
                         : "with p " + std::to_string(fault.probability);
    return out + (fault.sticky ? ", until cleared" : ", once");
  }

  // ENOSPC on writes (a full disk) or EIO on anything; at a matching call
  // early enough to be met, or at random.
  IoFault draw_fault() {
    IoFault fault;
    fault.kind =
        chance(0.5) ? IoFault::Kind::kNoSpace : IoFault::Kind::kIoError;
    const unsigned writes[] = {IoFault::kAppend, IoFault::kSync,
                               IoFault::kCreate};
    const unsigned all[] = {IoFault::kAppend, IoFault::kSync, IoFault::kRead,
                            IoFault::kCreate};
    fault.ops =
        fault.kind == IoFault::Kind::kNoSpace ? writes[roll(3)] : all[roll(4)];
    fault.sticky = chance(0.75);
    fault.seed = random_();
    if (chance(0.3)) {
      fault.nth = 0;
      fault.probability = std::uniform_real_distribution(0.002, 0.05)(random_);
    } else {
      const int range = fault.ops == IoFault::kCreate ? 12
                        : fault.ops == IoFault::kRead ? 40
                                                      : 200;
      fault.nth = 1 + roll(range);
    }
    return fault;
  }

  void trial() {
    ++totals_.trials;
    ++generation_in_store_;
    trial_ = Trial{};
    trial_.fault = draw_fault();
    trial_.at_hydrate = chance(0.2);
    if (trial_.at_hydrate) {
      // An open reads far more than it writes: reads of the log's table
      // files come after a hundred or so other calls.
      trial_.fault.nth =
          1 + roll(trial_.fault.ops == IoFault::kRead ? 200 : 40);
    }
    if (options_.inject == "ack-failed") {
      // Self-test: every trial's hub fails a sync and stops.
      trial_.fault = {.ops = IoFault::kSync, .nth = 5};
      trial_.at_hydrate = false;
    }
    auto file_system = std::make_shared<PowerCutFileSystem>();
    file_system_ = file_system.get();
    std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(file_system);
    if (trial_.at_hydrate) file_system->faults().arm(trial_.fault);
    std::vector<std::string> live;  // the hub's log when it stopped
    bool live_read = false;
    DriverOptions driver{
        .data = history_->dir,
        .generation = static_cast<int>(totals_.trials),
        .seed = random_(),
        .clock_micros = history_->clock_micros,
        .inject = options_.inject,
        .sink = [this](std::string_view line) { on_line(line); },
        .env = env.get(),
        .write_buffer_size = kWriteBufferSizes[roll(3)],
        .before_close =
            [&](const log::LogStore& store) {
              // Half the hubs close with the fault still there.
              if (chance(0.5)) file_system->faults().disarm();
              live_read =
                  store
                      .read(1, log::kLastSequence,
                            [&](std::uint64_t, std::string_view record) {
                              live.emplace_back(record);
                              return true;
                            })
                      .has_value();
              if (!live_read) live.clear();
            },
        .report_failures = true,
        .after_op = [this](engine::Hub& hub) { return after_op(hub); },
    };
    (void)run_driver(driver);
    file_system->faults().disarm();
    env.reset();
    const std::uint64_t injected = file_system->faults().injected();
    totals_.faults_injected += injected;
    totals_.trials_faulted += injected > 0 ? 1 : 0;
    file_system_ = nullptr;
    if (options_.verbose) {
      std::cerr << "fault trial " << totals_.trials << ": "
                << describe(trial_.fault)
                << (trial_.at_hydrate ? " from hydrate" : "") << ", "
                << injected << " injected, " << trial_.ops << " ops, "
                << trial_.acked.size() << " acked"
                << (trial_.stopped ? ", stopped: " + *trial_.stopped : "")
                << "\n";
    }
    check_reopened(live_read ? &live : nullptr);
  }

  void on_line(std::string_view line) {
    trial_.output.append(line);
    trial_.output.push_back('\n');
    if (line == "phase ready" && !trial_.at_hydrate) {
      file_system_->faults().arm(trial_.fault);
    } else if (line.starts_with("ack ")) {
      trial_.acked.emplace(line.substr(6));
      if (trial_.fatal_at_op_start) {
        problem("acknowledged after the hub stopped: " + std::string(line),
                totals_.acked_after_failure);
      }
    } else if (line.starts_with("fail ")) {
      ++totals_.failed_ops;
      clear_error(line);
    } else if (line.starts_with("open-failed ")) {
      ++totals_.open_refused;
      clear_error(line);
    }
  }

  // A failure must name what failed: the injected fault's own words.
  void clear_error(std::string_view line) {
    if (file_system_->faults().injected() == 0) {
      problem("failed with no fault injected: " + std::string(line),
              totals_.unclear_errors);
    } else if (!contains(line, "injected ")) {
      problem("an error that does not name the failure: " + std::string(line),
              totals_.unclear_errors);
    }
  }

  bool after_op(engine::Hub& hub) {
    Trial& t = trial_;
    ++t.ops;
    const std::optional<std::string> failure = hub.health().failure;
    if (failure && !t.stopped) {
      t.stopped = failure;
      t.stopped_at = t.ops;
      if (contains(*failure, kFullDisk)) {
        ++totals_.full_disk_stops;
      } else if (contains(*failure, kReopen)) {
        ++totals_.stopped_until_reopen;
        t.fatal = true;
      } else {
        problem("the hub stopped with an undocumented message: " + *failure,
                totals_.unclear_errors);
      }
      if (!contains(*failure, "injected ")) {
        problem("the hub's failure does not name the fault: " + *failure,
                totals_.unclear_errors);
      }
      check_reads(hub);
    }
    if (!failure && t.stopped) {
      if (t.fatal) {
        problem("the hub accepts changes again without a reopen",
                totals_.acked_after_failure);
        t.fatal = false;
      } else if (!t.resumed) {
        t.resumed = true;
        if (t.cleared_at >= 0) ++totals_.resumed_after_space_freed;
      }
    }
    t.fatal_at_op_start = t.fatal;
    if (t.stopped && t.cleared_at < 0 &&
        t.ops >= t.stopped_at + kOpsWhileFaulty) {
      file_system_->faults().disarm();  // space freed; the disk heals
      t.cleared_at = t.ops;
    }
    if (t.cleared_at >= 0 && t.ops >= t.cleared_at + kOpsAfterClearing) {
      if (!t.fatal && !t.resumed) {
        // The hub resumes at its next change, and those ops may all have
        // been refused before they made one (a post to a channel the full
        // disk kept from opening). On an idle server the next change is the
        // TTL sweep its timer runs, which always writes through the
        // committer: run it.
        (void)hub.expire_due();
        if (!hub.health().failure) {
          t.resumed = true;
          ++totals_.resumed_after_space_freed;
        } else {
          problem("the full disk had space again for " +
                      std::to_string(kOpsAfterClearing) +
                      " ops and a TTL sweep, and the hub still refused "
                      "changes",
                  totals_.not_resumed);
        }
      }
      check_reads(hub);
      return false;
    }
    if (!t.stopped && t.ops >= kMaxOps) {
      if (file_system_->faults().injected() > 0) check_reads(hub);
      return false;
    }
    return true;
  }

  // Reads through the hub, and a read-only open of its store beside it.
  void check_reads(engine::Hub& hub) {
    const bool read_fault = (trial_.fault.ops & IoFault::kRead) != 0;
    (void)hub.list_agents({.limit = kAll});
    std::vector<engine::ChannelMetadata> channels =
        hub.list_channels(std::nullopt, std::nullopt, kAll);
    std::shuffle(channels.begin(), channels.end(), random_);
    if (channels.size() > 3) channels.resize(3);
    for (const engine::ChannelMetadata& channel : channels) {
      ++totals_.hub_reads;
      const std::optional<std::string> before = hub.health().failure;
      if (!hub.get_channel(channel.channel_id)) {
        problem("get_channel " + channel.channel_id + " failed",
                totals_.read_failures);
      }
      auto wal = hub.read_wal(channel.channel_id, 0);
      if (!wal) {
        ++totals_.hub_reads_failed;
        if (!read_fault || !contains(wal.error().message, "injected ")) {
          problem("read_wal failed: " + wal.error().message,
                  totals_.read_failures);
        }
      }
      if (!before && hub.health().failure) {
        problem("a read stopped the hub: " + *hub.health().failure,
                totals_.read_failures);
      }
    }
    check_read_only();
  }

  // What `parley channels` and the other read-only commands open: a
  // RocksDB secondary, beside the live hub; it sees every acknowledged
  // record.
  void check_read_only() {
    ++totals_.read_only_opens;
    auto view = log::open_rocksdb_log_store_read_only(history_->dir);
    if (!view) {
      problem(
          "the read-only open beside the hub failed: " + view.error().message,
          totals_.read_failures);
      return;
    }
    std::set<std::string> tokens;
    auto read = (*view)->read(1, log::kLastSequence,
                              [&](std::uint64_t sequence, std::string_view r) {
                                tokens.insert(record_token(sequence, r));
                                return true;
                              });
    if (!read) {
      problem("the read-only view beside the hub does not read: " +
                  read.error().message,
              totals_.read_failures);
      return;
    }
    for (const std::string& token : trial_.acked) {
      if (!tokens.contains(token)) {
        problem(
            "the read-only view beside the hub misses acknowledged " + token,
            totals_.read_failures);
        break;
      }
    }
    if (totals_.read_only_opens % 8 == 1) parley_channels();
  }

  void parley_channels() {
    ChildProcess channels({options_.parley.string(), "channels", "--data",
                           history_->dir.string(), "-o", "jsonl"},
                          options_.data / "channels.err");
    channels.drain(std::chrono::steady_clock::now() + std::chrono::minutes(1));
    const int status = channels.wait();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      problem("parley channels beside the hub ended with status " +
                  std::to_string(status),
              totals_.read_failures);
    }
  }

  // After the fault cleared: the store reopens to the hub's log (perhaps
  // with batches it saw fail) and passes every check of the kill campaign.
  void check_reopened(const std::vector<std::string>* live) {
    PrefixCheck prefix = check_prefix(history_->dir, live);
    for (const std::string& what : prefix.problems) {
      problem("reopened: " + what, totals_.audit_failures);
    }
    if (!prefix.opened) {
      history_.reset();
      return;
    }
    totals_.torn_tails += prefix.torn_tail ? 1 : 0;
    totals_.unacked_survivors += prefix.beyond;
    if (prefix.dropped) {
      problem("reopened without " + std::to_string(prefix.dropped) +
                  " records the hub's log held",
              totals_.lost);
    }
    const ChildReport report = parse_child_output(trial_.output);
    if (report.clock_micros) history_->clock_micros = report.clock_micros;
    history_->generations.push_back(report.acks);
    history_->idempotent.insert(history_->idempotent.end(),
                                report.idempotent.begin(),
                                report.idempotent.end());
    StoreCheck check = check_store(*history_, std::nullopt, options_.parley,
                                   kRetriesPerTrial, random_);
    totals_.idempotent_retries += check.idempotent_retries;
    acked_ = check.acked;
    records_ = check.records;
    for (const std::string& what : check.problems) {
      if (reported_++ < 50) {
        std::cerr << "parley-crashtest: fault trial " << totals_.trials << " ("
                  << describe(trial_.fault) << "): " << what << "\n";
      }
    }
    if (check.audit_failures || check.lost || check.duplicated ||
        check.out_of_order) {
      failed_store_ = true;
    }
    totals_.audit_failures += check.audit_failures;
    lost_ = std::max(lost_, check.lost);
    duplicated_ = std::max(duplicated_, check.duplicated);
    out_of_order_ = std::max(out_of_order_, check.out_of_order);
    for (const std::string& what : report.violations) {
      problem("the driver saw: " + what, totals_.duplicated);
    }
    if (!check.opened) history_.reset();
  }

  const CampaignOptions options_;
  std::mt19937_64 random_;
  CampaignTotals totals_;
  std::unique_ptr<StoreHistory> history_;
  PowerCutFileSystem* file_system_ = nullptr;  // the running trial's
  Trial trial_;
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

CampaignTotals run_fault_campaign(const CampaignOptions& options) {
  FaultCampaign campaign(options);
  return campaign.run();
}

std::string fault_totals_json(const CampaignTotals& totals) {
  const std::pair<const char*, std::uint64_t> fields[] = {
      {"trials", totals.trials},
      {"faults_injected", totals.faults_injected},
      {"trials_faulted", totals.trials_faulted},
      {"acked_ops", totals.acked_ops},
      {"failed_ops", totals.failed_ops},
      {"lost", totals.lost},
      {"duplicated", totals.duplicated},
      {"out_of_order", totals.out_of_order},
      {"acked_after_failure", totals.acked_after_failure},
      {"unclear_errors", totals.unclear_errors},
      {"not_resumed", totals.not_resumed},
      {"read_failures", totals.read_failures},
      {"audit_failures", totals.audit_failures},
      {"open_refused", totals.open_refused},
      {"stopped_until_reopen", totals.stopped_until_reopen},
      {"full_disk_stops", totals.full_disk_stops},
      {"resumed_after_space_freed", totals.resumed_after_space_freed},
      {"hub_reads", totals.hub_reads},
      {"hub_reads_failed", totals.hub_reads_failed},
      {"read_only_opens", totals.read_only_opens},
      {"unacked_survivors", totals.unacked_survivors},
      {"torn_tails", totals.torn_tails},
      {"idempotent_retries", totals.idempotent_retries},
      {"records", totals.records},
      {"stores", totals.stores},
  };
  std::string out = "{";
  for (const auto& [name, value] : fields) {
    if (out.size() > 1) out += ", ";
    out += "\"" + std::string(name) + "\": " + std::to_string(value);
  }
  return out + "}";
}

}  // namespace parley::crashtest
