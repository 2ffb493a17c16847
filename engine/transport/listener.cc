#include "engine/transport/listener.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <iostream>
#include <optional>
#include <string>

#include "engine/transport/accept_errors.h"
#include "engine/transport/metrics.h"
#include "engine/transport/server_context.h"
#include "engine/transport/socket_slots.h"
#include "engine/transport/ws_session.h"

namespace parley::transport {

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// Binds `acceptor` to `endpoint`, or says why not.
engine::Result<void> bind_acceptor(tcp::acceptor& acceptor,
                                   const tcp::endpoint& endpoint) {
  boost::system::error_code ec;
  const std::string where =
      endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return engine::invalid("cannot listen on " + where + ": " + ec.message());
  return {};
}

}  // namespace

Listener::Listener(net::io_context& io, net::ssl::context* tls,
                   ServerContext& context, SocketSlots& sockets)
    : io_(io),
      acceptor_(net::make_strand(io)),
      retry_(acceptor_.get_executor()),
      tls_(tls),
      context_(context),
      sockets_(sockets) {}

engine::Result<std::shared_ptr<Listener>> Listener::open(
    net::io_context& io, const tcp::endpoint& endpoint, net::ssl::context* tls,
    ServerContext& context, SocketSlots& sockets) {
  auto listener = std::make_shared<Listener>(io, tls, context, sockets);
  if (auto bound = bind_acceptor(listener->acceptor_, endpoint); !bound) {
    return std::unexpected(bound.error());
  }
  listener->bound_ = listener->acceptor_.local_endpoint();
  return listener;
}

void Listener::start() {
  net::post(acceptor_.get_executor(),
            [self = shared_from_this()] { self->accept(); });
}

void Listener::stop() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    boost::system::error_code ignored;
    self->acceptor_.close(ignored);
    self->retry_.cancel();
  });
}

void Listener::accept() {
  acceptor_.async_accept(
      net::make_strand(io_),
      [self = shared_from_this()](boost::system::error_code ec,
                                  tcp::socket socket) {
        if (ec == net::error::operation_aborted || !self->acceptor_.is_open()) {
          return;
        }
        if (ec) {
          self->accept_failed(ec);
          return;
        }
        self->accepted(std::move(socket));
        self->accept();
      });
}

void Listener::accepted(tcp::socket socket) {
  std::optional<SocketSlots::Slot> slot = sockets_.try_take();
  if (!slot) {
    context_.metrics.connection_refused();
    boost::system::error_code ignored;
    socket.close(ignored);
    log_limited("refused a connection: all " +
                std::to_string(sockets_.limit()) +
                " sockets of max_connections are open");
    return;
  }
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  start_session(std::move(socket), std::move(*slot), tls_, context_);
}

void Listener::accept_failed(const boost::system::error_code& error) {
  context_.metrics.accept_failed();
  const bool exhausted = accept_exhausted(error);
  log_limited("accept failed: " + error.message() +
              (exhausted ? "; retrying every " +
                               std::to_string(kAcceptRetryDelay.count()) + " ms"
                         : ""));
  if (!exhausted) {
    accept();
    return;
  }
  retry_.expires_after(kAcceptRetryDelay);
  retry_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec && self->acceptor_.is_open()) self->accept();
  });
}

void Listener::log_limited(std::string_view line) {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_log_) {
    ++not_logged_;
    return;
  }
  std::cerr << "parley serve: " << line;
  if (not_logged_ > 0) {
    std::cerr << " (" << not_logged_
              << " more refusals or failed accepts since the last line)";
  }
  std::cerr << '\n';
  not_logged_ = 0;
  next_log_ = now + std::chrono::seconds(10);
}

}  // namespace parley::transport
