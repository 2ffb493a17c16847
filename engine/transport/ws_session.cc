#include "engine/transport/ws_session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <string>
#include <type_traits>

#include "engine/transport/connection.h"
#include "engine/transport/metrics.h"

namespace parley::transport {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

template <class NextLayer>
class WsSession final : public Connection {
 public:
  static constexpr bool kTls = std::is_same_v<NextLayer, TlsStream>;

  template <class... Args>
  WsSession(ServerContext& context, std::string peer, Args&&... args)
      : Connection(context, std::move(peer)),
        ws_(std::forward<Args>(args)...),
        keepalive_(ws_.get_executor()),
        teardown_(ws_.get_executor()) {}

  void run() {
    net::dispatch(ws_.get_executor(),
                  [self = self_ptr()] { self->handshake(); });
  }

  void close(std::uint16_t code, std::string reason) override {
    net::post(ws_.get_executor(),
              [self = self_ptr(), code, reason = std::move(reason)]() mutable {
                self->do_close(code, std::move(reason));
              });
  }

 protected:
  void start_writer() override {
    net::post(ws_.get_executor(), [self = self_ptr()] { self->write_next(); });
  }

 private:
  std::shared_ptr<WsSession> self_ptr() {
    return std::static_pointer_cast<WsSession>(shared_from_this());
  }
  const ConnectionOptions& options() { return context().options; }

  void handshake() {
    if constexpr (kTls) {
      beast::get_lowest_layer(ws_).expires_after(options().handshake_timeout);
      ws_.next_layer().async_handshake(
          ssl::stream_base::server, [self = self_ptr()](beast::error_code ec) {
            if (ec) return self->finish(ec, "TLS handshake failed");
            self->accept();
          });
    } else {
      accept();
    }
  }

  void accept() {
    // The WebSocket stream keeps its own timeouts from here on.
    beast::get_lowest_layer(ws_).expires_never();
    websocket::stream_base::timeout timeouts{};
    timeouts.handshake_timeout = options().handshake_timeout;
    timeouts.idle_timeout = websocket::stream_base::none();
    timeouts.keep_alive_pings = false;
    ws_.set_option(timeouts);
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& response) {
          response.set(beast::http::field::server, "parley");
        }));
    ws_.read_message_max(options().max_frame_bytes);
    ws_.control_callback(
        [this](websocket::frame_type kind, beast::string_view) {
          if (kind == websocket::frame_type::pong) on_pong();
        });
    ws_.async_accept([self = self_ptr()](beast::error_code ec) {
      if (ec) return self->finish(ec, "WebSocket handshake failed");
      self->accepted_ = true;
      self->on_open();
      self->arm_keepalive(self->options().ping_interval);
      self->read();
    });
  }

  void read() {
    ws_.async_read(
        buffer_, [self = self_ptr()](beast::error_code ec, std::size_t) {
          if (ec) return self->finish(ec, "");
          std::string text = beast::buffers_to_string(self->buffer_.data());
          self->buffer_.consume(self->buffer_.size());
          self->on_message(text);
          self->read();
        });
  }

  void write_next() {
    if (closing_ || writing_) return;
    auto next = queue().pop();
    if (!next) {
      on_writer_idle();
      return;
    }
    writing_ = true;
    frame_ = std::move(*next);
    ws_.text(true);
    ws_.async_write(net::buffer(frame_),
                    [self = self_ptr()](beast::error_code ec, std::size_t) {
                      self->writing_ = false;
                      if (ec) return self->finish(ec, "");
                      self->write_next();
                    });
  }

  // Keepalive: a ping `ping_interval` after the last pong; no pong within
  // `ping_timeout` closes the connection.
  void arm_keepalive(std::chrono::milliseconds after) {
    if (options().ping_interval.count() <= 0 || closing_) return;
    keepalive_.expires_after(after);
    keepalive_.async_wait([self = self_ptr(),
                           generation =
                               ++keepalive_generation_](beast::error_code ec) {
      if (ec || generation != self->keepalive_generation_ || self->closing_) {
        return;
      }
      self->on_keepalive();
    });
  }

  void on_keepalive() {
    if (awaiting_pong_) {
      context().metrics.keepalive_timeout();
      do_close(kCloseInternal, "keepalive ping timeout");
      return;
    }
    awaiting_pong_ = true;
    if (!pinging_) {
      pinging_ = true;
      ws_.async_ping({}, [self = self_ptr()](beast::error_code) {
        self->pinging_ = false;
      });
    }
    arm_keepalive(options().ping_timeout);
  }

  void on_pong() {
    if (!awaiting_pong_) return;
    awaiting_pong_ = false;
    arm_keepalive(options().ping_interval);
  }

  void do_close(std::uint16_t code, std::string reason) {
    if (closing_ || finished_) return;
    closing_ = true;
    close_reason_ = reason;
    queue().close();
    ++keepalive_generation_;
    keepalive_.cancel();
    // A peer that does not answer the close (or does not read at all) has
    // its socket torn down.
    teardown_.expires_after(options().handshake_timeout);
    teardown_.async_wait([self = self_ptr()](beast::error_code ec) {
      if (ec) return;
      beast::get_lowest_layer(self->ws_).close();
    });
    if (reason.size() > 123) reason.resize(123);
    ws_.async_close(websocket::close_reason(
                        static_cast<websocket::close_code>(code), reason),
                    [self = self_ptr()](beast::error_code) {});
  }

  void finish(beast::error_code ec, std::string_view during) {
    if (finished_) return;
    finished_ = true;
    closing_ = true;
    ++keepalive_generation_;
    keepalive_.cancel();
    teardown_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
    std::string why;
    if (!close_reason_.empty()) {
      why = close_reason_;
    } else if (ec == websocket::error::message_too_big) {
      why = "a message exceeded " + std::to_string(options().max_frame_bytes) +
            " bytes (closed with 1009)";
    } else if (ec == websocket::error::closed) {
      why = "";  // the client closed it
    } else if (!during.empty()) {
      why = std::string(during) + ": " + ec.message();
    } else if (ec != net::error::operation_aborted && ec != net::error::eof) {
      why = ec.message();
    }
    if (accepted_) on_closed(why);  // else it never counted as open
  }

  websocket::stream<NextLayer> ws_;
  beast::flat_buffer buffer_;
  net::steady_timer keepalive_;
  net::steady_timer teardown_;
  std::string frame_;  // the frame being written
  std::string close_reason_;
  std::uint64_t keepalive_generation_ = 0;
  bool writing_ = false;
  bool awaiting_pong_ = false;
  bool pinging_ = false;
  bool closing_ = false;
  bool finished_ = false;
  bool accepted_ = false;  // the WebSocket handshake succeeded
};

std::string peer_of(const tcp::socket& socket) {
  beast::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "unknown peer";
  return endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

}  // namespace

std::shared_ptr<Connection> start_session(tcp::socket socket, ssl::context* tls,
                                          ServerContext& context) {
  std::string peer = peer_of(socket);
  if (tls) {
    auto session = std::make_shared<WsSession<TlsStream>>(
        context, std::move(peer), std::move(socket), *tls);
    session->run();
    return session;
  }
  auto session = std::make_shared<WsSession<PlainStream>>(
      context, std::move(peer), std::move(socket));
  session->run();
  return session;
}

}  // namespace parley::transport
