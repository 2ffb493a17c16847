// The admin HTTP port (Beast): one GET per connection, answered by a
// handler, then the connection closes. The server serves /healthz and
// /metrics through it. Each connection holds one of the port's socket
// slots until it closes (at most 10 s: the exchange's deadline); with
// every slot taken a new connection is closed at once. When accept()
// fails for want of file descriptors or memory, the loop waits before it
// tries again (accept_errors.h).
//
// Thread safety: start() and stop() from any thread; the handler runs on
// an io thread and must be thread-safe.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "engine/base/error.h"

namespace parley::transport {

class SocketSlots;

// Admin connections open at once: scrapers and health checks need a few.
inline constexpr std::size_t kMaxAdminConnections = 32;

struct AdminResponse {
  unsigned status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class AdminHttp : public std::enable_shared_from_this<AdminHttp> {
 public:
  // Answers a GET of `target` (path and query).
  using Handler = std::function<AdminResponse(std::string_view target)>;

  // Binds `endpoint` (port 0: any free port), or fails with kInvalid.
  // `sockets` must outlive the port and every connection it accepts.
  static engine::Result<std::shared_ptr<AdminHttp>> open(
      boost::asio::io_context& io,
      const boost::asio::ip::tcp::endpoint& endpoint, Handler handler,
      SocketSlots& sockets);

  void start();
  void stop();  // idempotent
  boost::asio::ip::tcp::endpoint local_endpoint() const { return bound_; }

  AdminHttp(boost::asio::io_context& io, Handler handler, SocketSlots& sockets);

 private:
  void accept();

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;  // on the acceptor's strand
  Handler handler_;
  SocketSlots& sockets_;
  boost::asio::ip::tcp::endpoint bound_;
};

}  // namespace parley::transport
