// The hub's periodic workers: the TTL sweep (Hub::expire_due), the expectation
// tick (Hub::tick_expectations) and custom workers (register_sweeper, LIM-14),
// each on its own Boost.Asio steady_timer, all run by one background thread.
//
// Loop: sleep `interval`, run, repeat; the first run is one interval after
// start (or after registering, when already running). A worker that throws
// or fails is reported on stderr and keeps its schedule; the other workers
// are unaffected. Tests drive the hub tick by tick instead, with the
// injected clock, and never start a Sweeper.
//
// Threading: every member may be called from any thread but a worker's own
// run. Workers run on the sweeper's thread, one at a time. The hub must
// outlive the sweeper (or stop() must have returned).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string_view>

#include "engine/base/error.h"

namespace parley::engine {

class Hub;

struct SweeperOptions {
  // 0 disables that worker. AG2's defaults: ttl_sweep_interval 30 s,
  // expectation_sweep_interval 10 s.
  std::chrono::milliseconds ttl_interval{30000};
  std::chrono::milliseconds expectation_interval{10000};
};

class Sweeper {
 public:
  using Work = std::function<void()>;
  // The names of the built-in workers, taken at start().
  static constexpr std::string_view kTtlWorker = "ttl_expiry";
  static constexpr std::string_view kExpectationWorker = "expectations";

  // Does nothing until start(). `hub` must outlive the sweeper.
  explicit Sweeper(Hub& hub, SweeperOptions options = {});
  Sweeper(const Sweeper&) = delete;
  Sweeper& operator=(const Sweeper&) = delete;
  ~Sweeper();  // stop()

  // Registers the built-in workers (unless disabled) and starts the thread.
  // Fails when already running.
  Result<void> start();
  // Cancels every timer, lets a run in progress finish and joins the
  // thread. Registered workers stay registered. Idempotent.
  void stop();

  // A custom periodic worker. Fails with "sweeper already registered:
  // '<name>'" for a taken name and "interval_seconds must be positive:
  // <x>" for an interval <= 0.
  Result<void> register_worker(std::string_view name,
                               std::chrono::duration<double> interval,
                               Work work);
  // Stops `name`'s schedule (a run already under way finishes). Unknown
  // names are ignored.
  void unregister_worker(std::string_view name);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parley::engine
