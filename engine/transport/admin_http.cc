#include "engine/transport/admin_http.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

#include "engine/transport/accept_errors.h"
#include "engine/transport/socket_slots.h"

namespace parley::transport {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// One request, one response.
class AdminExchange : public std::enable_shared_from_this<AdminExchange> {
 public:
  AdminExchange(tcp::socket socket, SocketSlots::Slot slot,
                const AdminHttp::Handler& handler)
      : slot_(std::move(slot)), stream_(std::move(socket)), handler_(handler) {}

  void run() {
    stream_.expires_after(std::chrono::seconds(10));
    http::async_read(
        stream_, buffer_, request_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) {
          if (!ec) self->respond();
        });
  }

 private:
  void respond() {
    AdminResponse answer;
    if (request_.method() != http::verb::get &&
        request_.method() != http::verb::head) {
      answer = {405, "text/plain; charset=utf-8", "only GET\n"};
    } else {
      answer = handler_(
          std::string_view(request_.target().data(), request_.target().size()));
    }
    response_.version(request_.version());
    response_.result(answer.status);
    response_.set(http::field::server, "parley");
    response_.set(http::field::content_type, answer.content_type);
    response_.body() = std::move(answer.body);
    response_.keep_alive(false);
    response_.prepare_payload();
    http::async_write(
        stream_, response_,
        [self = shared_from_this()](beast::error_code, std::size_t) {
          beast::error_code ignored;
          self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
        });
  }

  SocketSlots::Slot slot_;  // declared before stream_: outlives the socket
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  AdminHttp::Handler handler_;
};

}  // namespace

AdminHttp::AdminHttp(net::io_context& io, Handler handler, SocketSlots& sockets)
    : io_(io),
      acceptor_(net::make_strand(io)),
      retry_(acceptor_.get_executor()),
      handler_(std::move(handler)),
      sockets_(sockets) {}

engine::Result<std::shared_ptr<AdminHttp>> AdminHttp::open(
    net::io_context& io, const tcp::endpoint& endpoint, Handler handler,
    SocketSlots& sockets) {
  auto admin = std::make_shared<AdminHttp>(io, std::move(handler), sockets);
  boost::system::error_code ec;
  auto& acceptor = admin->acceptor_;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return engine::invalid(
        "cannot listen on admin address " + endpoint.address().to_string() +
        ":" + std::to_string(endpoint.port()) + ": " + ec.message());
  }
  admin->bound_ = acceptor.local_endpoint();
  return admin;
}

void AdminHttp::start() {
  net::post(acceptor_.get_executor(),
            [self = shared_from_this()] { self->accept(); });
}

void AdminHttp::stop() {
  net::post(acceptor_.get_executor(), [self = shared_from_this()] {
    boost::system::error_code ignored;
    self->acceptor_.close(ignored);
    self->retry_.cancel();
  });
}

void AdminHttp::accept() {
  acceptor_.async_accept(
      net::make_strand(io_),
      [self = shared_from_this()](boost::system::error_code ec,
                                  tcp::socket socket) {
        if (!self->acceptor_.is_open()) return;
        if (!ec) {
          if (auto slot = self->sockets_.try_take()) {
            std::make_shared<AdminExchange>(std::move(socket), std::move(*slot),
                                            self->handler_)
                ->run();
          } else {
            boost::system::error_code ignored;
            socket.close(ignored);
          }
        } else if (accept_exhausted(ec)) {
          self->retry_.expires_after(kAcceptRetryDelay);
          self->retry_.async_wait([self](boost::system::error_code waited) {
            if (!waited && self->acceptor_.is_open()) self->accept();
          });
          return;
        }
        self->accept();
      });
}

}  // namespace parley::transport
