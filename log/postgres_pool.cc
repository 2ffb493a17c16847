#include "log/postgres_pool.h"

namespace parley::log::postgres_backend {

Result<ConnectionPool::Lease> ConnectionPool::acquire() {
  {
    MutexLock lock(mutex_);
    if (!idle_.empty()) {
      Connection connection = std::move(idle_.back());
      idle_.pop_back();
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
