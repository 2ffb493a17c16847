// Which connection each agent is bound to, hub-wide: an agent is bound by a
// successful `register` or `hello` on a connection, moves when another
// connection re-attaches it, and is unbound when its connection closes or it is
// unregistered. A bound agent is subscribed to the hub's deliveries, which this
// table turns into notify frames on its connection; an unbound agent is not
// subscribed, so it is offline to the hub (its envelopes wait in the log for
// replay).
//
// Thread safety: every member is safe from any thread. Deliveries run on
// posting threads and only queue the envelope; the connection's writer
// encodes the notify. Lock order: the table's lock, then
// the hub's delivery lock (subscribe) or a connection's replay order and
// send queue.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "log/string_map.h"

namespace parley::engine {
class Hub;
struct Envelope;
}  // namespace parley::engine

namespace parley::transport {

class Connection;

class BindingTable {
 public:
  // `hub` must outlive the table.
  explicit BindingTable(engine::Hub& hub);
  BindingTable(const BindingTable&) = delete;
  BindingTable& operator=(const BindingTable&) = delete;

  // Binds `agent_id` to `connection`, taking it from any other connection,
  // then runs `then` before any delivery to the agent can reach
  // `connection` (a hello queues its welcome there).
  void bind(const std::string& agent_id,
            const std::shared_ptr<Connection>& connection,
            const std::function<void()>& then = {});
  // Unbinds `agent_id` wherever it is bound.
  void unbind(std::string_view agent_id);
  // Unbinds every agent bound to `connection`.
  void unbind_all(const Connection& connection);

  bool holds(const Connection& connection, std::string_view agent_id) const;
  // Sorted.
  std::vector<std::string> agents_of(const Connection& connection) const;

 private:
  struct Binding {
    const Connection* connection;  // identity only; may be gone
    std::weak_ptr<Connection> weak;
  };
  void deliver(const std::string& recipient_id,
               const std::shared_ptr<const engine::Envelope>& envelope);
  using ByAgent = log::StringMap<Binding>;
  void erase_locked(ByAgent::iterator it);

  engine::Hub& hub_;
  mutable std::shared_mutex mutex_;
  ByAgent by_agent_;
  std::map<const Connection*, std::set<std::string>> by_connection_;
};

}  // namespace parley::transport
