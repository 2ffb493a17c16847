// `parley serve`: the hub on the network. Owns the hub (on a given log
// store), the WebSocket listener (ws:// or wss://), the admin HTTP port,
// the sweeper (TTL and expectation sweeps on timers against the hub's
// clock), the request pools and a few io threads that run every socket.
//
// Lifecycle: start() opens everything and accepts connections once it
// returns; shutdown() drains: stop accepting, refuse new requests, wait
// (up to drain_timeout) for the requests in flight, answer them, close
// every connection with 1001, stop the sweeper, then close the hub, which
// syncs and closes the log. Nothing acked is lost either way: a request is
// answered ok only once its change is durable.
//
// Thread safety: every member is safe from any thread except the server's
// own io threads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "engine/base/error.h"
#include "engine/transport/server_config.h"

namespace parley::log {
class LogStore;
}
namespace parley::engine {
class Clock;
class Hub;
}  // namespace parley::engine

namespace parley::transport {

class Server {
 public:
  // Validates `config`, opens the hub on `store`, binds the ports and
  // starts serving. `clock` defaults to the system clock.
  static engine::Result<std::unique_ptr<Server>> start(
      ServerConfig config, std::shared_ptr<log::LogStore> store,
      std::shared_ptr<const engine::Clock> clock = nullptr);
  // Serves `hub`, opened as open_standby_hub() opens one and since made
  // the writer of its log (Hub::take_over).
  static engine::Result<std::unique_ptr<Server>> start(
      ServerConfig config, std::unique_ptr<engine::Hub> hub);

  // A standby's hub (Hub::open_standby), configured as start() configures
  // the hub it opens: follows `view`, a read-only view of the log another
  // hub writes. Binds nothing.
  static engine::Result<std::unique_ptr<engine::Hub>> open_standby_hub(
      const ServerConfig& config, std::shared_ptr<log::LogStore> view,
      std::shared_ptr<const engine::Clock> clock = nullptr);

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();  // shutdown()

  // The bound ports (the real ones when port 0 was asked for).
  std::uint16_t port() const;
  std::optional<std::uint16_t> admin_port() const;
  // "ws://HOST:PORT" or "wss://HOST:PORT".
  std::string url() const;
  engine::Hub& hub();
  const ServerConfig& config() const;

  // The graceful stop described above; returns the hub's close result.
  // Idempotent.
  engine::Result<void> shutdown();

  // From now on SIGINT and SIGTERM are the server's instead of ending the
  // process: one that arrives before run_until_signal is kept for it. Call
  // it before announcing the server to anyone who may signal it.
  void catch_signals();

  // Blocks until SIGINT or SIGTERM (catch_signals() first, if it was not
  // called) or stop_soon(), then shutdown(). A second signal during the
  // shutdown exits the process at once (128 + the signal).
  engine::Result<void> run_until_signal();
  // Ends run_until_signal()'s wait as a first signal would, from any
  // thread; once a stop has begun, does nothing (unlike a second signal).
  void stop_soon();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace parley::transport
