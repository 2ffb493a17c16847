#include "tests/crashtest/store_check.h"

#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/base/clock.h"
#include "engine/hub/hub.h"
#include "engine/ops/control_plane.h"
#include "engine/state/hub_state.h"
#include "log/rocksdb_log_store.h"
#include "replay/record_json.h"
#include "replay/state_hash.h"
#include "replay/store_audit.h"
#include "tests/crashtest/ack_check.h"
#include "tests/crashtest/child_process.h"
#include "tests/crashtest/record_token.h"

namespace parley::crashtest {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

void fail(StoreCheck& check, std::string what) {
  ++check.audit_failures;
  check.problems.push_back(std::move(what));
}

void check_acked(const log::LogStore& store, const StoreHistory& history,
                 StoreCheck& check) {
  auto acks = check_acks(store, history.generations);
  if (!acks) {
    fail(check, "the log does not read back: " + acks.error().message);
    return;
  }
  check.records = acks->records;
  check.acked = acks->acked;
  check.lost = acks->lost;
  check.duplicated = acks->duplicated;
  check.out_of_order = acks->out_of_order;
  for (std::string& problem : acks->problems) {
    check.problems.push_back(std::move(problem));
  }
}

// The in-process audit, and the incremental fold against its fresh fold.
void audit_and_fold(const log::LogStore& store, StoreHistory& history,
                    StoreCheck& check) {
  auto report = replay::audit_store(store);
  if (!report) {
    fail(check, "audit: " + report.error().message);
    return;
  }
  if (!report->clean()) {
    std::string what =
        "audit found " + std::to_string(report->problems.size()) + " problems";
    for (std::size_t i = 0;
         i < std::min<std::size_t>(3, report->problems.size()); ++i) {
      what += "; " + replay::describe(report->problems[i]);
    }
    fail(check, what);
  }
  if (!history.incremental) {
    auto folded = replay::FoldedStore::fold(store);
    if (!folded) {
      fail(check, "fold: " + folded.error().message);
      return;
    }
    history.incremental = std::move(*folded);
  } else if (auto advanced = history.incremental->advance(store); !advanced) {
    fail(check, "incremental fold: " + advanced.error().message);
    return;
  }
  const std::uint64_t incremental =
      replay::store_state_hash(history.incremental->state());
  if (incremental != report->state_hash) {
    fail(check, "the fold kept across generations hashes " +
                    replay::hash_hex(incremental) + ", a fresh fold " +
                    replay::hash_hex(report->state_hash));
  }
}

// Every envelope the follower printed is in the log at the channel
// sequence it printed, and it printed them densely in order.
void check_follower(const log::LogStore& store, const FollowerRun& follower,
                    StoreCheck& check) {
  if (!WIFEXITED(follower.status) || WEXITSTATUS(follower.status) != 0) {
    fail(check, "the follower of " + follower.channel + " ended with status " +
                    std::to_string(follower.status));
  }
  std::istringstream lines(follower.output);
  std::string line;
  std::uint64_t previous = 0;
  while (std::getline(lines, line)) {
    if (lines.eof()) break;  // no newline: cut short
    const json printed = json::parse(line, nullptr, false);
    if (!printed.is_object() || !printed.contains("sequence")) {
      fail(check, "the follower printed: " + line);
      continue;
    }
    const std::uint64_t sequence = printed["sequence"].get<std::uint64_t>();
    const std::string id = printed.value("envelope_id", "");
    if (previous && sequence != previous + 1) {
      fail(check, "the follower printed sequence " + std::to_string(sequence) +
                      " after " + std::to_string(previous));
    }
    previous = sequence;
    std::string stored;
    auto read = store.read_channel(
        follower.channel, sequence, sequence,
        [&](std::uint64_t, std::uint64_t log_sequence,
            std::string_view record) {
          stored =
              replay::record_to_json(log_sequence, record)["envelope"].value(
                  "envelope_id", "");
          return true;
        });
    if (!read || stored != id) {
      fail(check, "the follower printed " + id + " at sequence " +
                      std::to_string(sequence) + " of " + follower.channel +
                      ", the log holds '" + stored + "' there");
    }
    ++check.followed_envelopes;
  }
}

// Re-sends acknowledged idempotent posts: each returns its envelope and
// appends nothing.
void retry_idempotent(std::shared_ptr<log::LogStore> store,
                      const StoreHistory& history, int retries,
                      std::mt19937_64& random, StoreCheck& check) {
  auto clock = std::make_shared<engine::ManualClock>(engine::Timestamp(
      std::chrono::microseconds(history.clock_micros
                                    ? history.clock_micros
                                    : 1767225600LL * 1000000)));
  auto hub = engine::Hub::open({.store = store, .clock = clock});
  if (!hub) {
    fail(check, "the hub does not open: " + hub.error().message);
    return;
  }
  engine::ControlPlane ops(**hub);
  std::vector<IdempotentPost> posts = history.idempotent;
  std::shuffle(posts.begin(), posts.end(), random);
  int sent = 0;
  for (const IdempotentPost& post : posts) {
    if (sent == retries) break;
    if (!(*hub)->get_agent(post.sender)) continue;  // unregistered since
    const std::uint64_t before = store->last_sequence();
    const json envelope = {{"channel_id", post.channel},
                           {"sender_id", post.sender},
                           {"audience", nullptr},
                           {"event_type", "ag2.msg.text"},
                           {"event_data", {{"text", post.key}}},
                           {"idempotency_key", post.key}};
    auto id = ops.call("post_envelope", {{"envelope", envelope}});
    ++sent;
    if (!id || id->get<std::string>() != post.envelope_id ||
        store->last_sequence() != before) {
      ++check.duplicated;
      check.problems.push_back(
          "re-sending idempotent post " + post.envelope_id + " answered " +
          (id ? id->dump() : "error " + id.error().message) + " and wrote " +
          std::to_string(store->last_sequence() - before) + " records");
    }
  }
  check.idempotent_retries += static_cast<std::uint64_t>(sent);
  (void)(*hub)->close();
}

void parley_audit(const fs::path& parley, const fs::path& dir,
                  StoreCheck& check) {
  ChildProcess audit(
      {parley.string(), "audit", "--data", dir.string(), "-o", "jsonl"},
      dir.parent_path() / "audit.err");
  audit.drain(std::chrono::steady_clock::now() + std::chrono::minutes(2));
  const int status = audit.wait();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string tail = audit.output().substr(
        audit.output().size() > 600 ? audit.output().size() - 600 : 0);
    fail(check, "parley audit ended with status " + std::to_string(status) +
                    ": " + tail);
  }
}

}  // namespace

PrefixCheck check_prefix(const fs::path& dir,
                         const std::vector<std::string>* live) {
  PrefixCheck check;
  auto opened = log::open_rocksdb_log_store(dir);
  if (!opened) {
    check.problems.push_back("the store does not open: " +
                             opened.error().message);
    return check;
  }
  check.opened = true;
  check.torn_tail = opened->recovery.torn_tail;
  std::uint64_t mismatches = 0;
  std::string first_mismatch;
  auto read = opened->store->read(
      1, log::kLastSequence,
      [&](std::uint64_t sequence, std::string_view record) {
        check.survivors.push_back(record_token(sequence, record));
        if (live && sequence <= live->size() &&
            (*live)[sequence - 1] != record) {
          if (!mismatches++) {
            first_mismatch = "log sequence " + std::to_string(sequence) + " (" +
                             check.survivors.back() + ")";
          }
        }
        return true;
      });
  if (!read) {
    check.problems.push_back("the log does not read: " + read.error().message);
    return check;
  }
  check.read_back = true;
  if (mismatches) {
    check.problems.push_back(std::to_string(mismatches) +
                             " records differ from what the hub had in its "
                             "log, first " +
                             first_mismatch);
  }
  if (!live || mismatches) return check;
  if (check.survivors.size() >= live->size()) {
    check.beyond = check.survivors.size() - live->size();
  } else {
    check.dropped = live->size() - check.survivors.size();
  }
  // The fold of the prefix of the hub's own log.
  auto adapters = replay::builtin_adapter_registry();
  engine::HubState prefix(*adapters);
  const std::size_t common = std::min(check.survivors.size(), live->size());
  for (std::size_t i = 0; i < common; ++i) {
    // Records must start 8-byte aligned: std::string data is.
    (void)prefix.apply(i + 1, (*live)[i]);
  }
  auto folded = replay::FoldedStore::fold(*opened->store, common);
  if (!folded || replay::store_state_hash((*folded)->state()) !=
                     replay::store_state_hash(prefix)) {
    check.problems.push_back(
        "the store does not fold to the state of the prefix of the hub's "
        "log it holds");
  }
  return check;
}

StoreCheck check_store(StoreHistory& history,
                       const std::optional<FollowerRun>& follower,
                       const fs::path& parley, int retries,
                       std::mt19937_64& random) {
  StoreCheck check;
  auto opened = log::open_rocksdb_log_store(history.dir);
  if (!opened) {
    fail(check, "the store does not reopen: " + opened.error().message);
    return check;
  }
  check.opened = true;
  check.torn_tail = opened->recovery.torn_tail;
  std::shared_ptr<log::LogStore> store(std::move(opened->store));
  check_acked(*store, history, check);
  audit_and_fold(*store, history, check);
  if (follower) check_follower(*store, *follower, check);
  retry_idempotent(std::move(store), history, retries, random, check);
  parley_audit(parley, history.dir, check);
  return check;
}

}  // namespace parley::crashtest
