// Internal to the PostgreSQL backend: the connections a store reads on.
//
// Thread safety: acquire() may be called from any thread; each Lease is
// one thread's until it goes. A read that calls back into the store (a
// visitor reading again) gets a second connection, so nothing waits for
// a connection its own thread holds.
#pragma once

#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "log/mutex.h"
#include "log/postgres_connection.h"

namespace parley::log::postgres_backend {

class ConnectionPool {
 public:
  // Connections to `conninfo`, read-only sessions when `read_only`, that
  // stop waiting once `give_up` is requested; keeps at most kMaxIdle idle
  // ones and opens more as they are asked for.
  ConnectionPool(std::string conninfo, bool read_only, std::stop_token give_up)
      : conninfo_(std::move(conninfo)),
        read_only_(read_only),
        give_up_(std::move(give_up)) {}
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // A connection held until the Lease goes; returned to the pool then,
  // unless it broke.
  class Lease {
   public:
    Lease(ConnectionPool& pool, Connection connection)
        : pool_(&pool), connection_(std::move(connection)) {}
    Lease(Lease&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)),
          connection_(std::move(other.connection_)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (pool_) pool_->give_back(std::move(connection_));
    }
    const Connection& operator*() const { return connection_; }
    const Connection* operator->() const { return &connection_; }

   private:
    ConnectionPool* pool_;
    Connection connection_;
  };

  Result<Lease> acquire();
  // Hands a connection opened elsewhere to the pool.
  void give_back(Connection connection);
  // Closes every idle connection; leases out keep theirs.
  void clear();

 private:
  static constexpr std::size_t kMaxIdle = 4;

  const std::string conninfo_;
  const bool read_only_;
  const std::stop_token give_up_;
  Mutex mutex_;
  std::vector<Connection> idle_ GUARDED_BY(mutex_);
  bool cleared_ GUARDED_BY(mutex_) = false;  // returns are closed
};

}  // namespace parley::log::postgres_backend
