#include "engine/transport/listener.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <iostream>

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
                   ServerContext& context)
    : io_(io), acceptor_(net::make_strand(io)), tls_(tls), context_(context) {}

engine::Result<std::shared_ptr<Listener>> Listener::open(
    net::io_context& io, const tcp::endpoint& endpoint, net::ssl::context* tls,
    ServerContext& context) {
  auto listener = std::make_shared<Listener>(io, tls, context);
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
          std::cerr << "parley serve: accept failed: " << ec.message() << '\n';
        } else {
          socket.set_option(tcp::no_delay(true), ec);
          start_session(std::move(socket), self->tls_, self->context_);
        }
        self->accept();
      });
}

}  // namespace parley::transport
