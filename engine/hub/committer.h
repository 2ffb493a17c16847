// The hub's single writer. Every change to the hub runs through it as a
// Change (engine/hub/commit.h): in submission order, under one writer lock,
// the change's stage function validates against the folded state and
// stages one atomic batch; the batch is handed to the log (sequenced, not
// yet waited for), folded into the state at once, and made durable by one
// group commit shared with every change staged meanwhile. A refused change
// writes nothing.
//
// Changes queue on a lock-free queue. A blocking caller (apply) runs the
// queue itself when nobody else does and writes the log group itself, so a
// lone caller pays no thread hop; it then publishes its batch and returns
// on its own thread. An asynchronous change (submit) never waits for the
// log: its caller runs the queue too when nobody else does, one round at
// most (what a full round leaves the committer's own thread runs; the log
// thread, submitting from a completion, runs it too unless the hub has
// stopped accepting changes), and hands the group commit to
// the log thread, so staging the next changes overlaps writing (and
// syncing) the last ones with no thread hop before staging; the change
// completes (settle, publish, done) once its batch is durable: on the log
// thread as it tells the group durable (no hop back), or on the
// committer's thread when the change's staging ended after its group was
// written. Either way one thread at a
// time completes, in the order the changes finished, so a channel's
// envelopes are published in log order. Callbacks reached from an
// asynchronous completion (subscribers, listeners) must not block.
//
// The folded state shows a batch from the moment it is sequenced, before
// its group is written: a reader of the log that must see every record the
// state counts flushes the log first when it finds fewer (StateReads).
//
// A failed log write stops every later change, except a transient failure
// (log::is_transient: a full disk, a lost database connection): once the
// log resumes, the hub rebuilds its state from the log and accepts changes
// again (Hooks::rehydrate).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "engine/base/error.h"
#include "engine/hub/commit.h"
#include "engine/hub/mpsc_queue.h"
#include "log/log_store.h"
#include "log/mutex.h"
#include "log/thread_annotations.h"
#include "log/wake_flag.h"

namespace parley::engine {

class Committer {
 public:
  struct Hooks {
    // Folds a batch the log has just sequenced (each entry's `position`)
    // into the state and plans its deliveries. Writer lock held.
    std::function<Result<void>(Commit&)> fold;
    // Delivers a durable batch's envelopes and tells its listener events.
    // Outside every hub lock.
    std::function<void(const Commit&)> publish;
    // Rebuilds the state from the log, after a transient failure. Writer
    // lock held.
    std::function<Result<void>()> rehydrate;
  };

  // `writer` is the writer lock: held while changes are staged and folded
  // (HubCore::writer). It outlives the committer.
  Committer(log::LogStore& store, log::Mutex& writer, Hooks hooks);
  Committer(const Committer&) = delete;
  Committer& operator=(const Committer&) = delete;
  ~Committer();

  // Starts the committer's thread. Call once, before submit().
  void start();

  // Runs `change` (a Change<T>, or a ChangeLike whose functions have types
  // of their own) and returns its outcome once its batch is durable and
  // published (or the change was refused). Thread-safe.
  template <ChangeLike C>
  Result<ChangeValue<C>> apply(C change);

  // Runs `change` without waiting for the log (the calling thread may
  // stage it, and other queued changes, under the writer lock); `done` is
  // told the outcome on the log thread or the committer's (at once, on the
  // calling thread, when the hub is closed). Thread-safe. The request keeps
  // `change` and `done` as they are: a hot path that passes its own callable
  // types (a post) makes one allocation for all of it, where std::functions
  // would make one each.
  template <ChangeLike C, typename Tell = Done<ChangeValue<C>>>
  void submit(C change, Tell done);

  // Between them, this thread's asynchronous changes to this committer
  // only queue; the outermost end_batch() drains them together (one round,
  // as submit() would one change): a reader handing over every request of
  // one read stages them under one hold of the writer lock and asks the
  // log thread once. Batches nest; a batch of another committer already
  // open on the thread leaves this one's changes draining one by one.
  void begin_batch();
  void end_batch();

  // Runs `work` on the committer's thread after `delay` (at once, on the
  // calling thread, when the hub is closed). For timeouts of asynchronous
  // changes; `work` must check that it is still wanted.
  void run_after(std::chrono::milliseconds delay, std::function<void()> work);
  // Runs `work` on the committer's thread, after what is queued there.
  void post(std::function<void()> work);

  // kStorage when the hub is closed or has stopped accepting changes.
  Result<void> check_accepting() const EXCLUDES(failure_mutex_);
  // Why the hub stopped accepting changes, if it has.
  std::optional<std::string> failure() const EXCLUDES(failure_mutex_);
  // Log bytes of audit records made durable since the hub opened.
  std::int64_t audit_bytes() const { return audit_bytes_.load(); }

  // Refuses every later change, waits until every queued one is done and
  // every asynchronous one completed, and stops the committer's thread.
  // Idempotent. The caller closes the store afterwards.
  void close();

  // Holds the writer lock for its scope: nothing is staged meanwhile. After
  // a transient failure, once the log resumes, it first rebuilds the state.
  class SCOPED_CAPABILITY StagingLock {
   public:
    explicit StagingLock(Committer& committer) ACQUIRE(committer.writer_)
        : writer_(committer.writer_) {
      writer_.lock();
      committer.recover_after_transient_failure();
    }
    ~StagingLock() RELEASE() { writer_.unlock(); }
    StagingLock(const StagingLock&) = delete;
    StagingLock& operator=(const StagingLock&) = delete;

   private:
    log::Mutex& writer_;
  };

 private:
  // One change on its way through the queue.
  class Request {
   public:
    virtual ~Request() = default;
    Commit batch;
    Request* queue_next = nullptr;  // the link of queue_, then finished_
    bool blocking = false;

   private:
    friend class Committer;
    // The change's stage function, writer lock held.
    virtual Result<void> stage() = 0;
    // Settles, publishes unless refused, and tells the caller.
    virtual void complete(Result<void> outcome) = 0;
    // The outcome from what the pipeline and the log said.
    Result<void> outcome() const;

    Result<void> staged;        // the stage function's refusal, if any
    bool sequenced = false;     // the log took `batch`: `durable` is told
    log::Result<void> durable;  // the log's word on the batch
    std::atomic<int> unfinished = 2;
    log::WakeFlag done;  // blocking requests: both parts finished
  };

  template <typename T, typename C, typename Tell>
  class TypedRequest;
  struct Thread;
  class LogThread;

  // Queues `request` and sees that it runs; a blocking request then waits
  // and completes on the calling thread.
  void run(Request& request);
  void enqueue(Request& request);
  // How a drain has the log write what it staged.
  enum class Flush {
    kHere,       // on the draining thread, before drain() returns
    kLogThread,  // on the log thread; drain() returns at once
  };
  // How long a drain goes on while changes keep coming.
  enum class Extent {
    kUntilIdle,  // round after round, until one takes fewer than its most
    kOneRound,   // one round; what a full one leaves, the committer's thread
  };
  // Runs every queued change unless another thread is doing so, then has
  // the log write them.
  void drain(Flush flush, Extent extent);
  // Has the committer's thread drain, unless a drain already waits there.
  void drain_on_thread();
  // drain(kLogThread, kOneRound), or drain_on_thread() where this thread
  // may not stage.
  void drain_here_or_on_thread();
  // Stage, append and fold of one request; whether the log took its batch.
  bool sequence(Request& request) REQUIRES(writer_);
  // Ends `parts` of a request's two (the pipeline's and the log's); the
  // last one completes it: a blocking one on its caller's thread, an
  // asynchronous one here on the log thread, else on the committer's.
  void finish(Request& request, int parts);
  // Completes every finished asynchronous request, in the order they
  // finished, unless another thread is doing so. The log thread or the
  // committer's; never with a hub lock held.
  void complete_finished();
  // After a failed log write or fold: every later change is refused.
  void stop_accepting(const Error& error) EXCLUDES(failure_mutex_);
  void stop_accepting(const log::Error& error) EXCLUDES(failure_mutex_);
  // Rehydrates after a transient failure once the log resumes.
  void recover_after_transient_failure() REQUIRES(writer_)
      EXCLUDES(failure_mutex_);
  void count_audit_bytes(const Commit& batch);
  // One asynchronous request or posted work is done.
  void settled();

  log::LogStore& store_;
  const Hooks hooks_;
  log::Mutex& writer_;  // serialises staging: held while staging and folding
  MpscQueue<Request> queue_;                // submitted, not yet staged
  MpscQueue<Request> finished_;             // asynchronous, to be completed
  std::atomic<bool> combining_ = false;     // a thread is draining queue_
  std::atomic<bool> drain_posted_ = false;  // a drain waits on the thread
  std::atomic<bool> completions_posted_ = false;  // complete_finished waits
  std::atomic<bool> completing_ = false;  // a thread is taking finished_
  std::atomic<bool> closed_ = false;
  std::atomic<int> in_flight_ = 0;  // asynchronous requests not completed
  std::atomic<std::int64_t> audit_bytes_ = 0;
  mutable log::Mutex failure_mutex_;
  std::optional<Error> failure_ GUARDED_BY(failure_mutex_);
  // failure_.has_value(), written with it, read without the lock on every
  // change's way in.
  std::atomic<bool> failed_ = false;
  bool failure_is_transient_ GUARDED_BY(failure_mutex_) = false;
  std::unique_ptr<Thread> thread_;
  std::unique_ptr<LogThread> log_thread_;
};

template <typename T, typename C, typename Tell>
class Committer::TypedRequest final : public Committer::Request {
 public:
  TypedRequest(Committer& committer, C change, Tell done)
      : committer_(committer),
        change_(std::move(change)),
        done_(std::move(done)) {}

 private:
  Result<void> stage() override {
    result_ = change_.stage(batch);
    if (!result_) return std::unexpected(result_.error());
    return {};
  }
  void complete(Result<void> outcome) override {
    if (!outcome) result_ = std::unexpected(outcome.error());
    if (present(change_.settle)) change_.settle(batch, result_, sequenced);
    if (result_) committer_.hooks_.publish(batch);
    done_(std::move(result_));
  }

  Committer& committer_;
  C change_;
  Tell done_;
  Result<T> result_ = std::unexpected(Error{ErrorKind::kStorage, "not run"});
};

template <ChangeLike C>
Result<ChangeValue<C>> Committer::apply(C change) {
  using T = ChangeValue<C>;
  Result<T> out = std::unexpected(Error{ErrorKind::kStorage, "not run"});
  auto tell = [&out](Result<T> result) { out = std::move(result); };
  TypedRequest<T, C, decltype(tell)> request(*this, std::move(change), tell);
  request.blocking = true;
  run(request);
  return out;
}

template <ChangeLike C, typename Tell>
void Committer::submit(C change, Tell done) {
  auto request = std::make_unique<TypedRequest<ChangeValue<C>, C, Tell>>(
      *this, std::move(change), std::move(done));
  run(*request.release());  // deleted once completed
}

}  // namespace parley::engine
