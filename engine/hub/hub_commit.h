// Internal to the hub: one atomic batch of records being assembled by a
// mutation, and the deliveries it leads to. Not part of the public API.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/hub/hub.h"
#include "log/log_store.h"
#include "log/wake_flag.h"

namespace parley::engine {

// A failure of the log, as the hub reports it: "<code>: <message>".
inline std::unexpected<Error> storage_error(const log::Error& error) {
  return fail(ErrorKind::kStorage,
              std::string(log::to_string(error.code)) + ": " + error.message);
}

struct Hub::Delivery {
  std::string recipient_id;
  std::shared_ptr<const Envelope> envelope;
  bool substantive = false;
  // The recipient's inbox.max_pending and high-water mark (spec §12.1)
  // when the delivery was planned; a cap or mark <= 0 never signals.
  std::int64_t inbox_cap = 0;
  std::int64_t high_water = 0;
  // Index of the staged envelope it delivers (Commit::envelopes).
  std::size_t staged = 0;
};

struct Hub::Commit {
  struct StagedEnvelope {
    std::size_t entry;  // index into entries
    std::shared_ptr<Envelope> envelope;
    bool deliver = true;  // false for acks and rejects (spec §4.7 step 10)
  };

  std::vector<log::AppendEntry> entries;
  std::vector<StagedEnvelope> envelopes;
  std::vector<Delivery> deliveries;  // filled by Hub::commit
  // What to tell the listeners once the batch is durable, in order. Each
  // event is told after the deliveries of the first `after` staged
  // envelopes and before the others' (spec §4.7: dispatch, then
  // on_envelope_posted, then the transition it causes).
  struct StagedEvent {
    std::size_t after;
    std::function<void(HubListener&)> tell;
  };
  std::vector<StagedEvent> events;

  void add(std::string record) { entries.push_back({std::move(record)}); }
  void add_envelope(Envelope envelope, bool hub_authored, bool deliver);
  bool empty() const { return entries.empty(); }
  // Stages `event` after the envelopes staged so far.
  void notify(std::function<void(HubListener&)> event) {
    events.push_back({envelopes.size(), std::move(event)});
  }
};

// One post on its way through the pipeline (engine/hub/hub_post.cc). Lives on
// the posting thread's stack until `done` is set. Two parts finish it: the
// combiner's (the pipeline ran: `result`, `batch` and `sequenced` are set)
// and, for a batch the log sequenced, the log's (`durable` is told).
struct Hub::PostRequest {
  explicit PostRequest(Envelope& posted) : envelope(posted) {}

  Envelope& envelope;  // the poster's; moved into `batch` once staged
  Commit batch;        // empty for a refused post or an idempotent retry
  Result<std::string> result;
  bool sequenced = false;  // the log took `batch`: `durable` will be told
  log::Result<void> durable;
  std::atomic<int> unfinished = 2;
  log::WakeFlag done;
  PostRequest* queue_next = nullptr;  // MpscQueue's link

  // Ends `parts` of the two; the last one wakes the poster, after which
  // the request may be gone.
  void finish(int parts = 1) {
    if (unfinished.fetch_sub(parts, std::memory_order_acq_rel) == parts) {
      done.set();
    }
  }
};

}  // namespace parley::engine
