// A whole store folded into engine::HubState without a live hub: the same
// HubState::apply the hub runs on hydrate and live, over every record in
// log-sequence order. Read-only: nothing is written, and channels a hub
// would expire on start (orphaned pending) stay as the log left them.
//
// Thread safety: none; build on one thread, then read from any.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "engine/adapters/adapter_registry.h"
#include "engine/base/error.h"
#include "engine/state/hub_state.h"
#include "log/log_store.h"

namespace parley::replay {

class FoldedStore {
 public:
  using RecordObserver =
      std::function<void(std::uint64_t log_sequence, std::string_view record)>;

  // Folds every record of `store` with log_sequence <= `up_to` through the
  // built-in adapters. `on_record` (optional) sees each record after it is
  // folded (progress, counting). Fails with kStorage when the log is unreadable
  // or a record does not decode.
  static engine::Result<std::unique_ptr<FoldedStore>> fold(
      const log::LogStore& store, std::uint64_t up_to = log::kLastSequence,
      const RecordObserver& on_record = {});

  // Folds the records appended to `store` since the last fold (those
  // after last_log_sequence()), so a follower stays current. Fails as
  // fold() does; the state then holds what was folded before the failure.
  engine::Result<void> advance(const log::LogStore& store);

  FoldedStore(const FoldedStore&) = delete;
  FoldedStore& operator=(const FoldedStore&) = delete;

  const engine::HubState& state() const { return *state_; }
  const engine::AdapterRegistry& adapters() const { return *adapters_; }
  // The last log sequence folded (0 for an empty log).
  std::uint64_t last_log_sequence() const { return last_log_sequence_; }

 private:
  FoldedStore();

  // adapters_ outlives state_, which refers to it.
  std::unique_ptr<engine::AdapterRegistry> adapters_;
  std::unique_ptr<engine::HubState> state_;
  std::uint64_t last_log_sequence_ = 0;
};

// The built-in adapters (consulting, conversation, discussion, workflow),
// as every hub registers them.
std::unique_ptr<engine::AdapterRegistry> builtin_adapter_registry();

}  // namespace parley::replay
