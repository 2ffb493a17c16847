// The I/O fault campaign. Each trial drives a hub in this process
// (tests/crashtest/crash_driver.h) on a store opened through a
// PowerCutFileSystem that injects one I/O fault (tests/crashtest/
// io_fault.h): ENOSPC or EIO on appends, syncs, reads or file creation, at
// a random matching call or at random, once or until it clears, armed
// while the hub serves or before it opens. It checks:
//   * every op that fails is told ErrorKind::kStorage with a message naming
//     the injected failure, and an open the fault stops is refused so;
//   * once the hub stops accepting changes, it says why in the words the
//     README documents: for a full disk it accepts again once space is
//     freed (the fault is disarmed), otherwise it refuses every later op,
//     none acknowledged, until it is reopened;
//   * reads through the hub (agents, channels, envelopes) keep working,
//     or fail with a storage error naming a read fault without stopping
//     the hub; a read-only open of the store beside the hub (what `parley
//     channels` does) sees every acknowledged record;
//   * after the fault clears and the store reopens: the store holds the
//     hub's log as its store last read it, byte for byte, perhaps followed
//     by batches the hub saw fail, and folds to the state of that log (the
//     reference fold); and every check of the kill campaign passes
//     (tests/crashtest/store_check.h: every acknowledged record exactly
//     once and in order, audits, `parley audit`, folds, idempotent
//     retries).
#pragma once

#include "tests/crashtest/crash_campaign.h"

namespace parley::crashtest {

CampaignTotals run_fault_campaign(const CampaignOptions& options);

// The campaign's JSON line: {"trials", "faults_injected", "acked_ops",
// "failed_ops", "lost", "duplicated", "acked_after_failure",
// "audit_failures", …}; no newline.
std::string fault_totals_json(const CampaignTotals& totals);

}  // namespace parley::crashtest
