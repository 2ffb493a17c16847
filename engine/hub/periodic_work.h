// The hub's periodic work: the TTL sweep (channels, then tasks) and the
// expectation tick, each run by a sweeper (engine/hub/sweeper.h) in
// production and step by step in tests and scripts. Each firing or expiry
// is one change run by the Committer.
#pragma once

#include <cstddef>
#include <string_view>

#include "engine/base/error.h"
#include "engine/hub/channel_lifecycle.h"
#include "engine/hub/committer.h"
#include "engine/hub/hub_core.h"
#include "engine/hub/state_reads.h"
#include "engine/hub/task_mutations.h"

namespace parley::engine {

class PeriodicWork {
 public:
  PeriodicWork(HubCore& core, const StateReads& reads, Committer& committer,
               ChannelLifecycle& channels, TaskMutations& tasks)
      : core_(core),
        reads_(reads),
        committer_(committer),
        channels_(channels),
        tasks_(tasks) {}

  // See Hub::expire_due and Hub::tick_expectations.
  Result<void> expire_due();
  Result<std::size_t> tick_expectations();
  // Channels a previous run left pending: expired, reason
  // "hydrate_orphaned_pending".
  Result<void> expire_orphaned_pending();

 private:
  // Evaluates one channel's expectations and fires its new keys.
  Result<std::size_t> tick_channel(std::string_view channel_id);
  // Logs one new (index, violator) of `channel_id` with `handler`'s
  // effects, unless it fired before; sets `terminal` when the channel is
  // (or is now) terminal. Returns whether it fired.
  Result<bool> fire_expectation(std::string_view channel_id, std::size_t index,
                                const Violation& violation,
                                std::string_view violator,
                                const ExpectationHandler& handler,
                                bool& terminal);

  HubCore& core_;
  const StateReads& reads_;
  Committer& committer_;
  ChannelLifecycle& channels_;
  TaskMutations& tasks_;
};

}  // namespace parley::engine
