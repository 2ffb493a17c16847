#include "log/postgres_pool.h"

#include <poll.h>

namespace parley::log::postgres_backend {

Result<ConnectionPool::Lease> ConnectionPool::acquire() {
  while (true) {
    Connection connection;
    {
      MutexLock lock(mutex_);
      if (idle_.empty()) break;
      connection = std::move(idle_.back());
      idle_.pop_back();
    }
    // Nothing arrives on an idle session (no LISTEN here) unless the
    // server ended it (a restart, pg_terminate_backend): its last word or
    // the closed socket make it readable, and it is dropped.
    pollfd socket{PQsocket(connection.get()), POLLIN, 0};
    if (connection.ok() && ::poll(&socket, 1, 0) == 0) {
      return Lease(*this, std::move(connection));
    }
  }
  auto connection = Connection::connect(conninfo_, read_only_, give_up_);
  if (!connection) return std::unexpected(connection.error());
  return Lease(*this, std::move(*connection));
}

void ConnectionPool::give_back(Connection connection) {
  // A connection left inside a transaction (a read that failed midway)
  // is not worth saving.
  if (!connection.ok() ||
      PQtransactionStatus(connection.get()) != PQTRANS_IDLE) {
    return;
  }
  MutexLock lock(mutex_);
  if (cleared_ || idle_.size() >= kMaxIdle) return;
  idle_.push_back(std::move(connection));
}

void ConnectionPool::clear() {
  std::vector<Connection> closing;
  MutexLock lock(mutex_);
  cleared_ = true;
  closing.swap(idle_);
}

}  // namespace parley::log::postgres_backend
