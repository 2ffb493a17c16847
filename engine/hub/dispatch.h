// Internal to the hub's facade: running a Change as a call's Dispatch says,
// and the blocking form of a completion-style call.
#pragma once

#include <utility>

#include "engine/base/error.h"
#include "engine/hub/committer.h"

namespace parley::engine {

// Runs `change` as `dispatch` says and tells `done` its outcome.
template <ChangeLike C, typename Tell = Done<ChangeValue<C>>>
void run(Committer& committer, C change, Tell done, Dispatch dispatch) {
  if (dispatch == Dispatch::kInline) {
    done(committer.apply(std::move(change)));
  } else {
    committer.submit(std::move(change), std::move(done));
  }
}

// The blocking form of a completion-style call: `start` runs it inline;
// returns what it told.
template <typename T, typename Start>
Result<T> run_inline(Start start) {
  Result<T> out = std::unexpected(Error{ErrorKind::kStorage, "not run"});
  start([&out](Result<T> result) { out = std::move(result); });
  return out;
}

// `change`, with `also` run in the same hold of the writer lock once its
// stage function accepted it.
template <typename T, typename F>
Change<T> and_then(Change<T> change, F also) {
  change.stage = [stage = std::move(change.stage),
                  also = std::move(also)](Commit& batch) -> Result<T> {
    auto staged = stage(batch);
    if (staged) also();
    return staged;
  };
  return change;
}

}  // namespace parley::engine
