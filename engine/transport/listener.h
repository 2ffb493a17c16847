// The accept loop of the WebSocket port: each accepted socket gets its own
// strand and a session (plain or TLS), holding one of the server's socket
// slots. With every slot taken, a new connection is closed at once. When
// accept() itself fails for want of file descriptors or memory, the loop
// waits 100 ms before it tries again (the connection stays in the backlog
// meanwhile), instead of failing again at once in a busy loop. Either is
// logged at most once every 10 s, with a count of the ones not logged.
//
// Thread safety: start() and stop() from any thread; the loop runs on the
// listener's strand.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string_view>

#include "engine/base/error.h"

namespace boost::asio::ssl {
class context;
}

namespace parley::transport {

struct ServerContext;
class SocketSlots;

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Binds and listens on `endpoint` (port 0: any free port). Fails with
  // kInvalid naming the address and the reason (in use, not local, ...).
  // `tls` (may be null), `context` and `sockets` must outlive the
  // listener and every session it starts.
  static engine::Result<std::shared_ptr<Listener>> open(
      boost::asio::io_context& io,
      const boost::asio::ip::tcp::endpoint& endpoint,
      boost::asio::ssl::context* tls, ServerContext& context,
      SocketSlots& sockets);

  void start();
  // Stops accepting and closes the port. Idempotent.
  void stop();
  // The bound address (the real port when asked for port 0).
  boost::asio::ip::tcp::endpoint local_endpoint() const { return bound_; }

  Listener(boost::asio::io_context& io, boost::asio::ssl::context* tls,
           ServerContext& context, SocketSlots& sockets);

 private:
  void accept();
  void accepted(boost::asio::ip::tcp::socket socket);
  void accept_failed(const boost::system::error_code& error);
  // Writes `line` to stderr unless a line went out less than 10 s ago;
  // then it is counted, and the next line written says how many were not.
  void log_limited(std::string_view line);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;  // on the acceptor's strand
  boost::asio::ssl::context* tls_;
  ServerContext& context_;
  SocketSlots& sockets_;
  boost::asio::ip::tcp::endpoint bound_;
  // On the acceptor's strand:
  std::chrono::steady_clock::time_point next_log_{};
  std::size_t not_logged_ = 0;
};

}  // namespace parley::transport
