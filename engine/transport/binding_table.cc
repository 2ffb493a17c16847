#include "engine/transport/binding_table.h"

#include <mutex>

#include "engine/hub/hub.h"
#include "engine/transport/connection.h"

namespace parley::transport {

BindingTable::BindingTable(engine::Hub& hub) : hub_(hub) {}

void BindingTable::bind(const std::string& agent_id,
                        const std::shared_ptr<Connection>& connection,
                        const std::function<void()>& then) {
  std::unique_lock lock(mutex_);
  auto it = by_agent_.find(agent_id);
  if (it != by_agent_.end() && it->second.connection != connection.get()) {
    by_connection_[it->second.connection].erase(agent_id);
  }
  by_agent_.insert_or_assign(agent_id, Binding{connection.get(), connection});
  by_connection_[connection.get()].insert(agent_id);
  hub_.subscribe(
      agent_id,
      [this](const std::string& recipient_id,
             const std::shared_ptr<const engine::Envelope>& envelope) {
        deliver(recipient_id, envelope);
      });
  if (then) then();
}

void BindingTable::erase_locked(ByAgent::iterator it) {
  auto owned = by_connection_.find(it->second.connection);
  if (owned != by_connection_.end()) {
    owned->second.erase(it->first);
    if (owned->second.empty()) by_connection_.erase(owned);
  }
  hub_.unsubscribe(it->first);
  by_agent_.erase(it);
}

void BindingTable::unbind(std::string_view agent_id) {
  std::unique_lock lock(mutex_);
  if (auto it = by_agent_.find(agent_id); it != by_agent_.end()) {
    erase_locked(it);
  }
}

void BindingTable::unbind_all(const Connection& connection) {
  std::unique_lock lock(mutex_);
  auto owned = by_connection_.find(&connection);
  if (owned == by_connection_.end()) return;
  const std::set<std::string> agents = std::move(owned->second);
  by_connection_.erase(owned);
  for (const std::string& agent_id : agents) {
    auto it = by_agent_.find(agent_id);
    if (it != by_agent_.end() && it->second.connection == &connection) {
      hub_.unsubscribe(agent_id);
      by_agent_.erase(it);
    }
  }
}

bool BindingTable::holds(const Connection& connection,
                         std::string_view agent_id) const {
  std::shared_lock lock(mutex_);
  auto it = by_agent_.find(agent_id);
  return it != by_agent_.end() && it->second.connection == &connection;
}

std::vector<std::string> BindingTable::agents_of(
    const Connection& connection) const {
  std::shared_lock lock(mutex_);
  auto owned = by_connection_.find(&connection);
  if (owned == by_connection_.end()) return {};
  return {owned->second.begin(), owned->second.end()};
}

void BindingTable::deliver(
    const std::string& recipient_id,
    const std::shared_ptr<const engine::Envelope>& envelope) {
  std::shared_ptr<Connection> connection;  // released after the lock
  std::shared_lock lock(mutex_);
  auto it = by_agent_.find(recipient_id);
  if (it == by_agent_.end()) return;
  connection = it->second.weak.lock();
  if (connection) connection->deliver(recipient_id, envelope);
}

}  // namespace parley::transport
