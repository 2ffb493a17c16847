// Internal to the hub: one atomic batch of records being assembled by a
// change, the deliveries it leads to, and what the listeners are told once
// it is durable.
#pragma once

#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/hub/hub_listener.h"
#include "engine/hub/requests.h"
#include "log/log_store.h"

namespace parley::engine {

// One envelope delivered to one recipient.
struct PlannedDelivery {
  std::string recipient_id;
  std::shared_ptr<const Envelope> envelope;
  bool substantive = false;
  // The recipient's inbox.max_pending and high-water mark when the delivery
  // was planned; a cap or mark <= 0 never signals pressure.
  std::int64_t inbox_cap = 0;
  std::int64_t high_water = 0;
  // Index of the staged envelope it delivers (Commit::envelopes).
  std::size_t staged = 0;
};

// A batch's lists hold their usual size in place: most changes (a post to
// one recipient) stage one record, one envelope and one delivery, and each
// list allocated on the heap would be freed on another thread once the
// batch is durable.
template <typename T>
using InPlaceVector = boost::container::small_vector<T, 1>;

using PlannedDeliveries = InPlaceVector<PlannedDelivery>;

struct Commit {
  struct StagedEnvelope {
    std::size_t entry;  // index into entries
    std::shared_ptr<Envelope> envelope;
    bool deliver = true;  // false for invite acks and rejects
  };

  InPlaceVector<log::AppendEntry> entries;
  InPlaceVector<StagedEnvelope> envelopes;
  PlannedDeliveries deliveries;  // planned when folded
  // What to tell the listeners once the batch is durable, in order. Each
  // event is told after the deliveries of the first `after` staged
  // envelopes and before the others': an envelope's deliveries, then its
  // on_envelope_posted, then the transition it causes.
  struct StagedEvent {
    std::size_t after;
    std::function<void(HubListener&)> tell;
  };
  InPlaceVector<StagedEvent> events;
  // A participant's substantive post (the first staged envelope): once
  // durable, its sender's pending-inbox count drops by one, as posting
  // proves it drains its inbox.
  bool drains_sender = false;

  // `record` made just now by a builder of engine/records/log_records.h.
  void add(std::string record) {
    entries.push_back({.record = std::move(record), .freshly_built = true});
  }
  void add_envelope(Envelope envelope, bool hub_authored, bool deliver);
  // Stages `envelope` itself, not a copy: nothing may change it afterwards.
  void add_envelope(std::shared_ptr<Envelope> envelope, bool hub_authored,
                    bool deliver);
  bool empty() const { return entries.empty(); }
  // Stages `event` after the envelopes staged so far.
  void notify(std::function<void(HubListener&)> event) {
    events.push_back({envelopes.size(), std::move(event)});
  }
};

// A change to the hub, run by the Committer (engine/hub/committer.h).
template <typename T>
struct Change {
  // Runs under the writer lock, against the folded state as of every change
  // staged before: validates, and stages one atomic batch of records into
  // the Commit (or none), or refuses. Must not call back into the hub.
  std::function<Result<T>(Commit&)> stage;
  // Optional: runs once the batch is durable, or the change failed, before
  // the batch is published; outside every hub lock. `sequenced`: the log
  // took the batch (so a failure came after it was folded).
  std::function<void(const Commit&, const Result<T>&, bool sequenced)> settle;
};

// What the Committer runs: a Change<T>, or any type with a `stage` and a
// `settle` called as a Change<T>'s are (so a hot path can keep callables
// of its own types instead of std::functions).
template <typename C>
concept ChangeLike = requires(C change, Commit& batch) {
  change.stage(batch);
  change.settle;
};

// T of a ChangeLike whose stage function yields Result<T>.
template <ChangeLike C>
using ChangeValue =
    typename std::invoke_result_t<decltype(C::stage)&, Commit&>::value_type;

// False only for an empty std::function (a Change without a settle).
template <typename F>
bool present(const F& function) {
  if constexpr (requires { static_cast<bool>(function); }) {
    return static_cast<bool>(function);
  } else {
    return true;
  }
}

}  // namespace parley::engine
