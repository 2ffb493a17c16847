// Internal to the PostgreSQL backend: who may write a store, and for how
// long.
//
// A writing hub holds two things. The writer's lock, a session advisory
// lock (kLockClass, hashtext(current_schema())) on its writer connection,
// which PostgreSQL frees when that session ends: the hub closed the store,
// or its process died and the server noticed the closed socket. And a
// lease, parley_writer.lease_until, which a LeaseKeeper pushes
// lease_timeout past the database's clock every third of lease_timeout. A
// hub that is paused, partitioned away, or on a machine that vanished
// keeps its session (until TCP gives up on it) but stops renewing; once
// its lease has lapsed, a read-write open ends that session
// (pg_terminate_backend: allowed to the same role, or to a member of
// pg_signal_backend) and takes the lock.
//
// Either way the new writer then bumps the epoch, and the old writer's
// next transaction fails its epoch check: no acked write can come from a
// writer that lost the store. The lease decides only when the wait for a
// silent writer ends; every time it reads is the database's, so the hubs'
// clocks need not agree.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "log/postgres_connection.h"

namespace parley::log::postgres_backend {

struct WriterLockPolicy {
  // How long to wait for a live writer to let go before failing kBusy;
  // milliseconds::max(): until it does, or `stop` is requested.
  std::chrono::milliseconds patience{1000};
  std::stop_token stop;
  // End the session of a writer whose lease has lapsed (a store of schema
  // version 2 or later; version 1 stores have no lease).
  bool end_lapsed_writer = true;
};

// Takes the writer's lock on `connection`. Returns how many sessions of a
// lapsed writer it ended to get it (0: the lock was free). kBusy names
// the live writer's lease; kIoError when the server fails a statement.
Result<int> take_writer_lock(const Connection& connection,
                             const std::string& where,
                             const WriterLockPolicy& policy);

// Renews the lease of the writer holding `epoch`, on a connection of its
// own, from a thread of its own, every third of `timeout`. Calls `lost`
// once, from that thread, and stops renewing when the lease is gone: the
// epoch moved on (another writer fenced this one), or no renewal
// succeeded for `timeout` since the last one was sent (another writer may
// take over from then on). `lost` must not call stop().
class LeaseKeeper {
 public:
  using Lost = std::function<void(Error)>;

  LeaseKeeper(std::string conninfo, std::string where, std::uint64_t epoch,
              std::chrono::milliseconds timeout, Lost lost);
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;
  ~LeaseKeeper() { stop(); }

  // Ends the thread; the lease then lapses timeout after the last renewal
  // unless the store is closed (which frees the writer's lock at once).
  void stop();

 private:
  using SteadyClock = std::chrono::steady_clock;
  enum class Renewal { kRenewed, kFenced, kFailed };

  void run();
  // One renewal, given up at `deadline`; `why` says why it failed.
  Renewal renew(SteadyClock::time_point deadline, std::string& why);

  const std::string conninfo_;
  const std::string where_;
  const std::uint64_t epoch_;
  const std::chrono::milliseconds timeout_;
  const Lost lost_;
  Connection connection_;  // the keeper thread's only

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread thread_;     // last: starts once the members above exist
};

}  // namespace parley::log::postgres_backend
