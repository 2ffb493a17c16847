// The simulated power-loss campaign. Each trial drives a hub in this
// process (tests/crashtest/crash_driver.h) on a store opened through a
// PowerCutFileSystem (tests/crashtest/power_cut_fs.h), cuts the power at a
// random moment — during hydrate included — and restores it: unsynced
// bytes and directory entries are dropped, whole or torn. Then the store
// must open, and:
//   * what it holds is a prefix of the hub's log when the power went (the
//     same bytes, record by record, dense), and folding it gives the state
//     hash of folding that prefix of the hub's log — or the whole log
//     followed by records of the batch whose write the power cut failed
//     (its bytes reached the disk; it was never acknowledged);
//   * every check of the kill campaign passes (tests/crashtest/
//     store_check.h: acks, audit, `parley audit`, folds);
//   * with sync durability, every acknowledged record survives, across all
//     of the store's generations; with async durability, the acknowledged
//     records that survive are a prefix of each stream's acks (nothing acked
//     after a lost one survives), and the lost ones are counted, not failed.
#pragma once

#include "log/log_store.h"
#include "tests/crashtest/crash_campaign.h"

namespace parley::crashtest {

CampaignTotals run_power_campaign(const CampaignOptions& options,
                                  log::Durability durability);

}  // namespace parley::crashtest
