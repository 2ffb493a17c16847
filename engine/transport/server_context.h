// What every connection of one server shares: the hub, the control plane, the
// binding table, the counters, the live connections and the per-connection
// settings. Owned by the Server, which outlives every connection.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "engine/transport/request_budget.h"
#include "engine/transport/send_queue.h"

namespace parley::engine {
class ControlPlane;
class Hub;
}  // namespace parley::engine

namespace parley::transport {

class BindingTable;
class ConnectionRegistry;
class Metrics;

struct ConnectionOptions {
  // Largest inbound WebSocket message; a larger one closes the connection
  // with code 1009 (message too big).
  std::size_t max_frame_bytes = 4 << 20;
  // Requests of one connection in flight (received, not yet answered): at
  // this many the session stops reading the socket until one is answered,
  // so a client sending faster than the hub commits is held back by TCP
  // instead of queueing without bound. The frames of the read under way
  // are still handled: at most a read buffer's worth more.
  std::size_t max_requests_in_flight = 1024;
  // The same bound in bytes: the frames of one connection's requests in
  // flight. A connection reaching either stops being read. (A request
  // holds about 3-4 times its frame in memory while it is in flight.)
  std::size_t max_request_bytes_in_flight = 16 << 20;
  // The bytes of requests in flight across all connections (the server's
  // RequestBudget): at this many every connection that reads more waits
  // until answers bring the total back below it.
  std::size_t max_total_request_bytes_in_flight = 256 << 20;
  SendQueueLimits send_queue;
  // The bytes queued over every connection's send queue (the server's
  // SendQueueTotal): beyond it, a frame for a connection whose queue
  // already holds frames closes that connection as a slow consumer.
  std::size_t max_total_send_queue_bytes = std::size_t{1} << 30;
  // A WebSocket ping is sent `ping_interval` after the last pong (or the
  // handshake); no pong within `ping_timeout` closes the connection (1011,
  // "keepalive ping timeout"). 0 disables keepalive.
  std::chrono::milliseconds ping_interval{20000};
  std::chrono::milliseconds ping_timeout{20000};
  // TLS and WebSocket handshakes, and the closing handshake.
  std::chrono::milliseconds handshake_timeout{10000};
};

struct ServerContext {
  ServerContext(engine::Hub& hub, engine::ControlPlane& control_plane,
                BindingTable& bindings, Metrics& metrics,
                ConnectionRegistry& connections, ConnectionOptions options)
      : hub(hub),
        control_plane(control_plane),
        bindings(bindings),
        metrics(metrics),
        connections(connections),
        options(std::move(options)),
        request_budget(this->options.max_total_request_bytes_in_flight),
        send_queue_total(this->options.max_total_send_queue_bytes) {}

  engine::Hub& hub;
  engine::ControlPlane& control_plane;
  BindingTable& bindings;
  Metrics& metrics;
  ConnectionRegistry& connections;
  ConnectionOptions options;
  RequestBudget request_budget;
  SendQueueTotal send_queue_total;
  // Set when the server starts draining: new requests are refused.
  std::atomic<bool> draining = false;
  std::atomic<std::uint64_t> next_connection_id = 1;
};

}  // namespace parley::transport
