// How concurrent posts share the writer lock. A post queues itself; the
// first poster to find no one combining becomes the combiner: it takes the
// writer lock once, runs every queued post through the pipeline
// (Hub::sequence_post, engine/hub/hub_channels.cc) back to back, each appended
// with LogStore::append_deferred and folded, releases the lock, and
// flushes the log, which writes them all with one group commit. Each
// poster sleeps once, until the log tells its post durable (or the
// combiner refuses it), then publishes its own deliveries.
//
// Without this, 32 concurrent posters hand the writer lock from thread to
// thread, each hand-off a context switch that the next post waits for.
#include "engine/base/event_types.h"
#include "engine/hub/hub.h"
#include "engine/hub/hub_commit.h"

namespace parley::engine {

namespace {

// A combiner flushes at least this often, so that a steady stream of posts
// cannot hold back the group commit of those it has sequenced.
constexpr std::size_t kMaxPostsPerFlush = 256;

}  // namespace

Result<std::string> Hub::accept_post(Envelope& envelope) {
  PostRequest request(envelope);
  posts_.push(&request);
  run_posts();
  request.done.wait();
  if (!request.batch.empty()) forget_in_flight(request.batch);
  if (!request.result || request.batch.empty()) {
    return std::move(request.result);
  }
  if (!request.durable) return storage_error(request.durable.error());
  count_audit_bytes(request.batch);
  // 9. posting anything substantive proves the sender drains its inbox
  const Envelope& posted = *request.batch.envelopes.front().envelope;
  if (!event_type::is_protocol(posted.event_type)) {
    std::lock_guard lock(delivery_mutex_);
    if (auto it = pending_inbox_.find(posted.sender_id);
        it != pending_inbox_.end() && it->second > 0) {
      --it->second;
    }
  }
  publish(request.batch);
  return std::move(request.result);
}

// Every queued post is taken by some thread: a poster that finds the role
// taken has queued before the combiner gives the role up, and the combiner
// looks at the queue again after giving it up (MpscQueue's ordering).
void Hub::run_posts() {
  for (;;) {
    std::size_t taken = 0;
    bool sequenced = false;
    while (taken < kMaxPostsPerFlush && !posts_.empty() &&
           !combining_.exchange(true)) {
      {
        auto writer = lock_writer();
        PostRequest* request = posts_.take_all();
        while (request != nullptr) {
          PostRequest* next = request->queue_next;  // finish() may end it
          request->result = sequence_post(*request);
          const bool took = request->sequenced;
          sequenced |= took;
          request->finish(took ? 1 : 2);
          request = next;
          ++taken;
        }
      }
      combining_ = false;
    }
    // Each post is told its own outcome; the flush only has to happen.
    if (sequenced) (void)store_->flush();
    if (taken < kMaxPostsPerFlush) return;
  }
}

}  // namespace parley::engine
