// The accept loop of the WebSocket port: each accepted socket gets its own
// strand and a session (plain or TLS).
//
// Thread safety: start() and stop() from any thread; the loop runs on the
// listener's strand.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "engine/base/error.h"

namespace boost::asio::ssl {
class context;
}

namespace parley::transport {

struct ServerContext;

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  // Binds and listens on `endpoint` (port 0: any free port). Fails with
  // kInvalid naming the address and the reason (in use, not local, ...).
  // `tls` (may be null) and `context` must outlive the listener.
  static engine::Result<std::shared_ptr<Listener>> open(
      boost::asio::io_context& io,
      const boost::asio::ip::tcp::endpoint& endpoint,
      boost::asio::ssl::context* tls, ServerContext& context);

  void start();
  // Stops accepting and closes the port. Idempotent.
  void stop();
  // The bound address (the real port when asked for port 0).
  boost::asio::ip::tcp::endpoint local_endpoint() const { return bound_; }

  Listener(boost::asio::io_context& io, boost::asio::ssl::context* tls,
           ServerContext& context);

 private:
  void accept();

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::ssl::context* tls_;
  ServerContext& context_;
  boost::asio::ip::tcp::endpoint bound_;
};

}  // namespace parley::transport
