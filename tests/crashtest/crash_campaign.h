// The parent side of the hub-level crash campaign. Each trial starts a
// child that drives a hub on a store (tests/crashtest/crash_driver.h) and
// kills it with SIGKILL at a random moment: at any time, during hydrate,
// during a sweep, or — as a store's first trial, sometimes — during
// `parley import-ag2`; some trials run a `parley log show -f` follower on
// the store meanwhile. After each kill the store is reopened and checked:
// every acknowledged record is in the log exactly once and in order
// (tests/crashtest/ack_check.h); the store audits clean, in process
// (replay::audit_store) and through `parley audit`; an incremental fold
// kept across the store's generations hashes the same as a fresh fold;
// every envelope the follower printed is in the log where it said;
// re-sending acknowledged idempotent posts returns their envelopes and
// writes nothing. The next child continues on the same store; a store is
// replaced by a fresh one every `generations_per_store` trials.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace parley::crashtest {

struct CampaignOptions {
  std::filesystem::path data;  // scratch space, emptied first
  int trials = 100;
  std::uint64_t seed = 0;
  int generations_per_store = 8;
  std::filesystem::path self;    // this program, run as the child
  std::filesystem::path parley;  // the `parley` binary
  std::filesystem::path ag2;     // an AG2 store for import-ag2; empty: none
  std::string inject;            // passed to every child (crash_driver.h)
  bool verbose = false;          // one line per trial on stderr
};

struct CampaignTotals {
  std::uint64_t trials = 0;
  std::uint64_t acked_ops = 0;  // acks checked at the end of each store
  std::uint64_t lost = 0;
  std::uint64_t duplicated = 0;  // includes idempotent retries answered
                                 // with another envelope or a new record
  std::uint64_t out_of_order = 0;
  std::uint64_t audit_failures = 0;  // audits, fold comparisons, follower
                                     // checks, children that did not die
  std::uint64_t records = 0;         // records in the stores at the end
  std::uint64_t stores = 0;
  std::uint64_t killed_in_hydrate = 0;
  std::uint64_t killed_in_sweep = 0;
  std::uint64_t killed_in_import = 0;  // import-ag2 killed before it ended
  std::uint64_t imports = 0;           // import-ag2 trials
  std::uint64_t followed = 0;          // trials with a follower
  std::uint64_t followed_envelopes = 0;
  std::uint64_t torn_tails = 0;  // reopens that dropped a torn tail
  std::uint64_t idempotent_retries = 0;
  // Power-cut trials (tests/crashtest/power_campaign.h).
  std::uint64_t power_cuts = 0;
  std::uint64_t cut_before_ready = 0;  // cut while the hub was opening
  std::uint64_t records_dropped = 0;   // written before the cut, gone after
  std::uint64_t acked_dropped = 0;     // acknowledged and gone (async only)
  // Records the hub wrote and saw fail (their sync failed) that survived.
  std::uint64_t unacked_survivors = 0;
  std::uint64_t files_removed = 0;  // unsynced directory entries dropped
  std::uint64_t renames_undone = 0;
  std::uint64_t files_cut = 0;   // files that lost unsynced bytes
  std::uint64_t files_torn = 0;  // of those, kept a torn prefix
  std::uint64_t bytes_dropped = 0;
  // I/O fault trials (tests/crashtest/fault_campaign.h).
  std::uint64_t faults_injected = 0;      // file system calls failed
  std::uint64_t trials_faulted = 0;       // trials in which a call failed
  std::uint64_t failed_ops = 0;           // ops told a storage error
  std::uint64_t acked_after_failure = 0;  // begun after the hub stopped
  std::uint64_t unclear_errors = 0;       // an error not naming the failure
  std::uint64_t open_refused = 0;         // hydrate refused, naming the fault
  std::uint64_t stopped_until_reopen = 0;
  std::uint64_t full_disk_stops = 0;
  std::uint64_t resumed_after_space_freed = 0;
  std::uint64_t not_resumed = 0;       // full disk, space freed, still refusing
  std::uint64_t hub_reads = 0;         // reads through a hub after a fault
  std::uint64_t hub_reads_failed = 0;  // of those, failed by a read fault
  std::uint64_t read_failures = 0;     // a read failed that must not, or the
                                       // failed read stopped the hub
  std::uint64_t read_only_opens = 0;   // secondary opens beside the hub
  bool failed() const {
    return lost || duplicated || out_of_order || audit_failures ||
           acked_after_failure || unclear_errors || not_resumed ||
           read_failures;
  }
};

CampaignTotals run_campaign(const CampaignOptions& options);

// {"trials": …, "acked_ops": …, "lost": …, "duplicated": …,
// "audit_failures": …, …}: one line, no newline; `power` adds the
// power-cut figures.
std::string totals_json(const CampaignTotals& totals, bool power = false);

}  // namespace parley::crashtest
