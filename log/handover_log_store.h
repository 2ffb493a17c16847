// A LogStore that stands in for the store it holds and can be handed a new
// one: a standby hub folds a read-only view of a log another hub writes
// through it, then, once it takes the log over, the same log opened
// read-write, without anything that holds the store noticing the change.
//
// Thread safety: as the store held, except hand_over(), which must not
// race any other call (a standby hands over before it writes or serves).
#pragma once

#include <memory>

#include "log/forwarding_log_store.h"

namespace parley::log {

class HandoverLogStore final : public ForwardingLogStore {
 public:
  using ForwardingLogStore::ForwardingLogStore;

  // Closes the store held and stands in for `next` from now on. When the
  // close fails, `next` is held anyway and the close's error returned.
  Result<void> hand_over(std::shared_ptr<LogStore> next) {
    auto closed = store_->close();
    store_ = std::move(next);
    return closed;
  }
};

}  // namespace parley::log
