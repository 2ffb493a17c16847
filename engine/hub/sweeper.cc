#include "engine/hub/sweeper.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <exception>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "engine/hub/hub.h"
#include "log/mutex.h"
#include "log/thread_annotations.h"
#include "log/thread_name.h"

namespace parley::engine {

namespace asio = boost::asio;

namespace {

struct Worker {
  std::string name;
  std::chrono::nanoseconds interval;
  Sweeper::Work work;
  std::unique_ptr<asio::steady_timer> timer;  // used on the io thread only
};

void run_reporting(const Worker& worker) {
  try {
    worker.work();
  } catch (const std::exception& error) {
    std::cerr << "parley: sweeper worker '" << worker.name
              << "' failed: " << error.what() << '\n';
  } catch (...) {
    std::cerr << "parley: sweeper worker '" << worker.name << "' failed\n";
  }
}

void report_failure(std::string_view worker, const Result<void>& result) {
  if (!result) {
    std::cerr << "parley: sweeper worker '" << worker
              << "' failed: " << result.error().message << '\n';
  }
}

}  // namespace

struct Sweeper::Impl {
  Impl(Hub& hub, SweeperOptions options) : hub(hub), options(options) {}

  // True when `worker` is still the one registered under its name.
  bool registered(const std::shared_ptr<Worker>& worker) {
    log::MutexLock lock(mutex);
    auto it = workers.find(worker->name);
    return it != workers.end() && it->second == worker;
  }

  // On the io thread: run once `interval` from now, then again.
  void arm(const std::shared_ptr<Worker>& worker) {
    worker->timer->expires_after(worker->interval);
    worker->timer->async_wait([this, weak = std::weak_ptr(worker)](
                                  const boost::system::error_code& error) {
      if (error) return;
      auto alive = weak.lock();
      if (!alive || !registered(alive)) return;
      run_reporting(*alive);
      if (registered(alive)) arm(alive);
    });
  }

  void post_arm(const std::shared_ptr<Worker>& worker) {
    asio::post(io, [this, weak = std::weak_ptr(worker)] {
      if (auto alive = weak.lock()) arm(alive);
    });
  }

  Result<void> add(std::string_view name,
                   std::chrono::duration<double> interval, Work work)
      REQUIRES(mutex) {
    if (!(interval.count() > 0)) {
      return invalid("interval_seconds must be positive: " +
                     nlohmann::json(interval.count()).dump());
    }
    if (workers.contains(name)) {
      return invalid("sweeper already registered: '" + std::string(name) + "'");
    }
    auto worker = std::make_shared<Worker>(Worker{
        .name = std::string(name),
        .interval =
            std::chrono::duration_cast<std::chrono::nanoseconds>(interval),
        .work = std::move(work),
        .timer = std::make_unique<asio::steady_timer>(io)});
    workers.emplace(worker->name, worker);
    if (running) post_arm(worker);
    return {};
  }

  Hub& hub;
  const SweeperOptions options;
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      guard;
  std::thread thread;
  log::Mutex mutex;
  std::map<std::string, std::shared_ptr<Worker>, std::less<>> workers
      GUARDED_BY(mutex);
  bool running GUARDED_BY(mutex) = false;
};

Sweeper::Sweeper(Hub& hub, SweeperOptions options)
    : impl_(std::make_unique<Impl>(hub, options)) {}

Sweeper::~Sweeper() { stop(); }

Result<void> Sweeper::start() {
  log::MutexLock lock(impl_->mutex);
  if (impl_->running) return invalid("the sweeper is already running");
  Hub& hub = impl_->hub;
  const SweeperOptions& options = impl_->options;
  if (options.ttl_interval.count() > 0 &&
      !impl_->workers.contains(kTtlWorker)) {
    (void)impl_->add(kTtlWorker, options.ttl_interval,
                     [&hub] { report_failure(kTtlWorker, hub.expire_due()); });
  }
  if (options.expectation_interval.count() > 0 &&
      !impl_->workers.contains(kExpectationWorker)) {
    (void)impl_->add(kExpectationWorker, options.expectation_interval, [&hub] {
      // A failing channel is already reported by the tick itself.
      (void)hub.tick_expectations();
    });
  }
  impl_->running = true;
  impl_->io.restart();
  impl_->guard.emplace(impl_->io.get_executor());
  for (auto& [name, worker] : impl_->workers) {
    impl_->post_arm(worker);
  }
  impl_->thread = std::thread([this] {
    log::name_current_thread("parley-sweep");
    impl_->io.run();
  });
  return {};
}

void Sweeper::stop() {
  {
    log::MutexLock lock(impl_->mutex);
    if (!impl_->running) return;
    impl_->running = false;
  }
  impl_->guard.reset();
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
  // Pending waits are dropped with the stopped context; fresh timers for a
  // later start().
  log::MutexLock lock(impl_->mutex);
  for (auto& [name, worker] : impl_->workers) {
    worker->timer = std::make_unique<asio::steady_timer>(impl_->io);
  }
}

Result<void> Sweeper::register_worker(std::string_view name,
                                      std::chrono::duration<double> interval,
                                      Work work) {
  log::MutexLock lock(impl_->mutex);
  return impl_->add(name, interval, std::move(work));
}

void Sweeper::unregister_worker(std::string_view name) {
  std::shared_ptr<Worker> worker;
  {
    log::MutexLock lock(impl_->mutex);
    auto it = impl_->workers.find(name);
    if (it == impl_->workers.end()) return;
    worker = std::move(it->second);
    impl_->workers.erase(it);
    if (!impl_->running) return;
  }
  asio::post(impl_->io, [worker] { worker->timer->cancel(); });
}

}  // namespace parley::engine
