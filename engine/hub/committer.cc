#include "engine/hub/committer.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <thread>
#include <utility>

#include "log/mutex.h"
#include "log/thread_annotations.h"
#include "log/thread_name.h"
#include "parley/schemas/log_generated.h"

namespace parley::engine {

namespace {

// A drain flushes the log at least this often, so that a steady stream of
// changes cannot hold back the group commit of those it has staged.
constexpr std::size_t kMaxChangesPerFlush = 256;
// An asynchronous drain asks the log thread to write at least this often,
// so that it writes while the next changes are staged (what is staged
// meanwhile joins the next group), and a burst of changes does not move
// through staging and writing as one batch.
constexpr std::size_t kChangesPerWrite = 32;

// On a committer's log thread, that committer (which it tells durable
// groups, with no hub lock held); elsewhere nullptr.
thread_local const Committer* log_thread_of = nullptr;

// The committer whose batch is open on this thread (begin_batch), how
// deeply, and whether a change joined it.
thread_local Committer* batch_of = nullptr;
thread_local int batch_depth = 0;
thread_local bool batch_joined = false;

// Watches `ready` for a few microseconds, for a thread about to sleep until
// more work comes: under load it comes sooner than a sleeping thread is
// woken (on a virtual machine, a halted CPU costs an exit to the host and
// a wake-up interrupt). True once `ready` holds.
template <typename Ready>
bool await_briefly(const Ready& ready) {
  const auto until =
      std::chrono::steady_clock::now() + std::chrono::microseconds(20);
  do {
    for (int i = 0; i < 32; ++i) {
      if (ready()) return true;
      log::cpu_relax();
    }
  } while (std::chrono::steady_clock::now() < until);
  return false;
}

}  // namespace

// The committer's own thread: an io_context that runs asynchronous drains,
// completions and timers.
struct Committer::Thread {
  boost::asio::io_context context{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work = boost::asio::make_work_guard(context);
  std::thread thread;
  log::Mutex idle_mutex;
  std::condition_variable idle;  // on idle_mutex: in_flight_ fell to 0
};

// The log thread: writes the log's open group whenever a drain asks, so
// that the committer's thread stages while a group is written and synced.
// Requests made while it writes are served by one more write.
class Committer::LogThread {
 public:
  LogThread(log::LogStore& store, const Committer& committer)
      : store_(store), committer_(committer) {}

  void start() {
    thread_ = std::thread([this] {
      log::name_current_thread("parley-log");
      log_thread_of = &committer_;
      run();
    });
  }
  // Has the open group written soon. Any thread; never blocks on the log.
  // Notifies after unlocking, so that the woken thread does not block on
  // the mutex at once and need a second wake-up.
  void request_flush() EXCLUDES(mutex_) {
    {
      log::MutexLock lock(mutex_);
      if (wanted_) return;
      wanted_ = true;
      wanted_hint_.store(true, std::memory_order_relaxed);
    }
    wake_.notify_one();
  }
  // Serves what was requested, then ends the thread. Idempotent.
  void stop() EXCLUDES(mutex_) {
    {
      log::MutexLock lock(mutex_);
      stopping_ = true;
      wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() EXCLUDES(mutex_) {
    log::MutexLock lock(mutex_);
    // Whether watching pays: it did last time, or the last sleep was
    // short. Under light load (one request in a round trip) it never does.
    bool watch = true;
    for (;;) {
      if (!wanted_ && !stopping_ && watch) {
        lock.unlock();
        watch = await_briefly(
            [this] { return wanted_hint_.load(std::memory_order_relaxed); });
        lock.lock();
      }
      if (!wanted_ && !stopping_) {
        const auto slept = std::chrono::steady_clock::now();
        while (!wanted_ && !stopping_) lock.wait(wake_);
        watch = std::chrono::steady_clock::now() - slept < kShortSleep;
      }
      if (!wanted_) return;
      wanted_ = false;
      wanted_hint_.store(false, std::memory_order_relaxed);
      lock.unlock();
      // Each member of the group is told its own outcome.
      (void)store_.flush();
      lock.lock();
    }
  }

  log::LogStore& store_;
  const Committer& committer_;
  std::thread thread_;
  log::Mutex mutex_;
  std::condition_variable wake_;  // on mutex_
  bool wanted_ GUARDED_BY(mutex_) = false;
  bool stopping_ GUARDED_BY(mutex_) = false;
  // A sleep this short means requests come close together: watch again.
  static constexpr std::chrono::microseconds kShortSleep{100};
  // wanted_, readable without the mutex: a hint for the spin above only.
  std::atomic<bool> wanted_hint_ = false;
};

Committer::Committer(log::LogStore& store, log::Mutex& writer, Hooks hooks)
    : store_(store),
      hooks_(std::move(hooks)),
      writer_(writer),
      thread_(std::make_unique<Thread>()),
      log_thread_(std::make_unique<LogThread>(store, *this)) {}

Committer::~Committer() { close(); }

void Committer::start() {
  log_thread_->start();
  thread_->thread = std::thread([this] {
    log::name_current_thread("parley-commit");
    thread_->context.run();
  });
}

Result<void> Committer::Request::outcome() const {
  if (!staged) return staged;
  if (sequenced && !durable) return storage_error(durable.error());
  return {};
}

void Committer::run(Request& request) {
  const bool blocking = request.blocking;
  // Counted before closed_ is read, so close() either waits for the request
  // or the request sees the hub closed.
  if (!blocking) ++in_flight_;
  if (closed_) {
    request.complete(
        std::unexpected(Error{ErrorKind::kStorage, "the hub is closed"}));
    if (!blocking) {
      delete &request;
      settled();
    }
    return;
  }
  // Once queued, a non-blocking request may be drained, finished and freed
  // by other threads at any moment: it is not read again here.
  queue_.push(&request);
  if (blocking) {
    drain(Flush::kHere, Extent::kUntilIdle);
    request.done.wait();
    request.complete(request.outcome());
  } else if (batch_of == this) {
    batch_joined = true;  // drained by end_batch()
  } else {
    drain_here_or_on_thread();
  }
}

void Committer::begin_batch() {
  if (batch_of == nullptr) batch_of = this;
  if (batch_of == this) ++batch_depth;
}

void Committer::end_batch() {
  if (batch_of != this || --batch_depth > 0) return;
  batch_of = nullptr;
  if (!std::exchange(batch_joined, false)) return;
  drain_here_or_on_thread();
}

void Committer::drain_here_or_on_thread() {
  // The log thread stages a change it submits (a completion's next change)
  // itself: handing it to the committer's thread costs a wake-up that, on
  // few cores, preempts the log thread. After a failure the committer's
  // thread stages it, as staging may then resume the log, which the log
  // thread cannot do (recover_after_transient_failure).
  if (log_thread_of == this && failed_.load(std::memory_order_acquire)) {
    drain_on_thread();
  } else {
    drain(Flush::kLogThread, Extent::kOneRound);
  }
}

void Committer::drain_on_thread() {
  if (drain_posted_.exchange(true)) return;
  post([this] {
    drain_posted_ = false;
    drain(Flush::kLogThread, Extent::kUntilIdle);
  });
}

// Every queued change is taken by some thread: a thread that finds the role
// taken has queued before the drainer gives the role up, and the drainer
// looks at the queue again after giving it up (MpscQueue's ordering).
void Committer::drain(Flush flush, Extent extent) {
  for (;;) {
    std::size_t taken = 0;
    bool sequenced = false;
    std::size_t unwritten = 0;  // sequenced since the log thread was asked
    auto ask_log_thread = [&] {
      if (flush == Flush::kLogThread && unwritten > 0) {
        log_thread_->request_flush();
        unwritten = 0;
      }
    };
    while (taken < kMaxChangesPerFlush && !queue_.empty() &&
           !combining_.exchange(true)) {
      {
        StagingLock writer(*this);
        Request* request = queue_.take_all();
        while (request != nullptr) {
          Request* next = request->queue_next;  // finish() may end it
          if (sequence(*request)) {
            sequenced = true;
            ++unwritten;
          }
          request = next;
          ++taken;
          if (unwritten == kChangesPerWrite) ask_log_thread();
        }
      }
      combining_ = false;
      ask_log_thread();
    }
    if (sequenced && flush == Flush::kHere) {
      // Each change is told its own outcome; the flush only has to happen.
      (void)store_.flush();
    }
    if (taken < kMaxChangesPerFlush) return;
    if (extent == Extent::kOneRound) return drain_on_thread();
  }
}

bool Committer::sequence(Request& request) {
  request.staged = check_accepting();
  if (request.staged) request.staged = request.stage();
  if (!request.staged || request.batch.empty()) {
    finish(request, 2);
    return false;
  }
  auto& entries = request.batch.entries;
  auto sequenced =
      store_.append_deferred(std::span(entries.data(), entries.size()),
                             [this, &request](log::Result<void> durable) {
                               if (durable) {
                                 count_audit_bytes(request.batch);
                               } else {
                                 stop_accepting(durable.error());
                               }
                               request.durable = std::move(durable);
                               finish(request, 1);
                             });
  if (!sequenced) {
    request.staged = storage_error(sequenced.error());
    finish(request, 2);
    return false;
  }
  request.sequenced = true;
  if (auto folded = hooks_.fold(request.batch); !folded) {
    // The state holds a batch the log may not keep: stop changing it.
    stop_accepting(folded.error());
    request.staged = std::unexpected(folded.error());
  }
  finish(request, 1);
  return true;
}

void Committer::finish(Request& request, int parts) {
  if (request.unfinished.fetch_sub(parts, std::memory_order_acq_rel) != parts) {
    return;
  }
  if (request.blocking) {
    request.done.set();  // the caller completes it; it may be gone now
    return;
  }
  finished_.push(&request);
  // The log thread completes what it made durable at once. Elsewhere (the
  // committer's thread under the writer lock, a blocking caller leading a
  // group) finished requests are handed to the committer's thread in
  // batches: one post per batch, not per request.
  if (log_thread_of == this) {
    complete_finished();
  } else if (!completions_posted_.exchange(true)) {
    boost::asio::post(thread_->context, [this] {
      // Cleared before the queue is looked at, so a request pushed after
      // that finds it clear and posts again (MpscQueue's ordering).
      completions_posted_ = false;
      complete_finished();
    });
  }
}

// Every finished request is completed by some thread: a thread that finds
// the role taken has pushed before the completer gives the role up, and
// the completer looks at the queue again after giving it up (MpscQueue's
// ordering), as drain() does.
void Committer::complete_finished() {
  while (!finished_.empty() && !completing_.exchange(true)) {
    Request* request = finished_.take_all();
    while (request != nullptr) {
      Request* next = request->queue_next;
      request->complete(request->outcome());
      delete request;
      settled();
      request = next;
    }
    completing_ = false;
  }
}

void Committer::post(std::function<void()> work) {
  ++in_flight_;
  boost::asio::post(thread_->context, [this, work = std::move(work)] {
    work();
    settled();
  });
}

void Committer::settled() {
  if (--in_flight_ != 0) return;
  log::MutexLock lock(thread_->idle_mutex);
  thread_->idle.notify_all();
}

void Committer::run_after(std::chrono::milliseconds delay,
                          std::function<void()> work) {
  if (closed_) {
    work();
    return;
  }
  auto timer =
      std::make_shared<boost::asio::steady_timer>(thread_->context, delay);
  // A timer still pending when the hub closes is dropped with the thread.
  timer->async_wait(
      [timer, work = std::move(work)](const boost::system::error_code& error) {
        if (!error) work();
      });
}

Result<void> Committer::check_accepting() const {
  if (closed_) return fail(ErrorKind::kStorage, "the hub is closed");
  if (!failed_.load(std::memory_order_acquire)) return {};
  log::MutexLock lock(failure_mutex_);
  if (failure_) return std::unexpected(*failure_);
  return {};
}

std::optional<std::string> Committer::failure() const {
  log::MutexLock lock(failure_mutex_);
  if (!failure_) return std::nullopt;
  return failure_->message;
}

void Committer::stop_accepting(const Error& error) {
  log::MutexLock lock(failure_mutex_);
  if (failure_) return;
  failure_ =
      Error{ErrorKind::kStorage,
            "the hub stopped accepting changes after a failed log write (" +
                error.message + "); reopen it",
            error.log_code};
  failed_ = true;
}

void Committer::stop_accepting(const log::Error& error) {
  if (!log::is_transient(error.code)) {
    stop_accepting(storage_error(error).error());
    return;
  }
  log::MutexLock lock(failure_mutex_);
  if (failure_) return;
  const std::string why = error.code == log::ErrorCode::kNoSpace
                              ? "the disk filled up while the log was written"
                              : "the connection to the database was lost";
  const std::string until = error.code == log::ErrorCode::kNoSpace
                                ? "once space is freed"
                                : "once it has reconnected";
  failure_ =
      Error{ErrorKind::kStorage,
            "the hub stopped accepting changes: " + why + " (" + error.message +
                "); it accepts them again by itself " + until,
            error.code};
  failure_is_transient_ = true;
  failed_ = true;
}

void Committer::recover_after_transient_failure() {
  if (!failed_.load(std::memory_order_acquire)) return;
  // The log thread stages only inside a group's completion, where resuming
  // the log would wait for that completion to end: it leaves the change
  // refused, and another thread's staging resumes.
  if (log_thread_of == this) return;
  {
    log::MutexLock lock(failure_mutex_);
    if (!failure_is_transient_) return;
  }
  if (auto resumed = store_.resume(); !resumed) {
    // Not yet (no room, no connection): tried again at the next change.
    if (log::is_transient(resumed.error().code)) return;
    log::MutexLock lock(failure_mutex_);
    failure_is_transient_ = false;
    failure_ = Error{ErrorKind::kStorage,
                     "the hub stopped accepting changes: the log cannot "
                     "resume (" +
                         resumed.error().message + "); reopen it",
                     resumed.error().code};
    return;
  }
  Result<void> rebuilt = hooks_.rehydrate();
  log::MutexLock lock(failure_mutex_);
  failure_is_transient_ = false;
  if (rebuilt) {
    failure_.reset();
    failed_ = false;
  } else {
    failure_ = Error{ErrorKind::kStorage,
                     "the hub stopped accepting changes: rebuilding its "
                     "state after the log resumed failed (" +
                         rebuilt.error().message + "); reopen it",
                     rebuilt.error().log_code};
  }
}

void Committer::count_audit_bytes(const Commit& batch) {
  std::int64_t bytes = 0;
  for (const log::AppendEntry& entry : batch.entries) {
    const schema::Record* root = schema::GetRecord(entry.record.data());
    if (root->body_type() == schema::Body::AuditRecorded) {
      bytes += static_cast<std::int64_t>(entry.record.size());
    }
  }
  if (bytes > 0) audit_bytes_ += bytes;
}

void Committer::close() {
  if (closed_.exchange(true)) return;
  // Whatever is queued is refused; what is sequenced becomes durable.
  drain(Flush::kHere, Extent::kUntilIdle);
  (void)store_.flush();
  if (!thread_->thread.joinable()) return;
  {
    log::MutexLock lock(thread_->idle_mutex);
    while (in_flight_ != 0) lock.wait(thread_->idle);
  }
  log_thread_->stop();
  thread_->context.stop();  // drops pending timers
  thread_->thread.join();
}

}  // namespace parley::engine
