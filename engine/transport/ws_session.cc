#include "engine/transport/ws_session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/hub/hub.h"
#include "engine/transport/connection.h"
#include "engine/transport/metrics.h"
#include "engine/transport/ws_frames.h"

namespace parley::transport {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Beast performs the opening handshake (TLS first, on wss://); from then on
// the session frames the messages itself on the stream beneath (ws_frames.h):
// one write carries every frame queued meanwhile, one read serves every
// frame that has arrived. The websocket::stream stays alive, unused, as the
// owner of that stream.
template <class NextLayer>
class WsSession final : public Connection {
 public:
  static constexpr bool kTls = std::is_same_v<NextLayer, TlsStream>;

  template <class... Args>
  WsSession(ServerContext& context, std::string peer, SocketSlots::Slot slot,
            Args&&... args)
      : Connection(context, std::move(peer)),
        slot_(std::move(slot)),
        ws_(std::forward<Args>(args)...),
        reader_(context.options.max_frame_bytes),
        keepalive_(ws_.get_executor()),
        teardown_(ws_.get_executor()) {}

  void run() {
    net::dispatch(ws_.get_executor(),
                  [self = self_ptr()] { self->handshake(); });
  }

  void resume_reading() override {
    net::post(ws_.get_executor(), [self = self_ptr()] {
      if (!self->finished_) self->read();
    });
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
  // Frames queued and written together, at most about this many bytes.
  static constexpr std::size_t kWriteBatchBytes = 256 * 1024;

  std::shared_ptr<WsSession> self_ptr() {
    return std::static_pointer_cast<WsSession>(shared_from_this());
  }
  const ConnectionOptions& options() { return context().options; }
  NextLayer& stream() { return ws_.next_layer(); }

  void handshake() {
    beast::get_lowest_layer(ws_).expires_after(options().handshake_timeout);
    if constexpr (kTls) {
      stream().async_handshake(
          ssl::stream_base::server, [self = self_ptr()](beast::error_code ec) {
            if (ec) return self->finish(ec, "TLS handshake failed");
            self->read_upgrade();
          });
    } else {
      read_upgrade();
    }
  }

  // The upgrade request is read here, not by Beast, so that any byte a
  // client sends after it stays in `handshake_buffer_` for the frame
  // reader.
  void read_upgrade() {
    http::async_read(stream(), handshake_buffer_, upgrade_,
                     [self = self_ptr()](beast::error_code ec, std::size_t) {
                       if (ec) {
                         return self->finish(ec, "WebSocket handshake failed");
                       }
                       self->accept();
                     });
  }

  void accept() {
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
    ws_.async_accept(upgrade_, [self = self_ptr()](beast::error_code ec) {
      if (ec) return self->finish(ec, "WebSocket handshake failed");
      self->accepted_ = true;
      if (const auto early = self->handshake_buffer_.cdata(); early.size()) {
        const auto room = self->reader_.prepare(early.size());
        std::memcpy(room.data(), early.data(), early.size());
        self->reader_.commit(early.size());
      }
      self->handshake_buffer_ = {};
      self->upgrade_ = {};
      self->on_open();
      self->arm_keepalive(self->options().ping_interval);
      if (self->handle_frames() && self->may_read()) self->read();
    });
  }

  void read() {
    const auto room = reader_.prepare();
    stream().async_read_some(
        net::buffer(room.data(), room.size()),
        [self = self_ptr()](beast::error_code ec, std::size_t bytes) {
          if (ec) return self->finish(ec, "");
          self->reader_.commit(bytes);
          if (self->handle_frames() && self->may_read()) self->read();
        });
  }

  // Handles every event the bytes read so far complete, then writes what
  // they queued; false once the connection reads no more.
  bool handle_frames() {
    bool reading = true;
    {
      // The requests these bytes carry are staged together once all are
      // handed over: one hold of the hub's writer lock, not one each.
      const engine::Hub::SubmissionBatch batch(context().hub);
      reading = handle_messages();
    }
    write_next();
    return reading && !finished_;
  }

  // Handles every event the bytes read so far complete; false once the
  // connection reads no more.
  bool handle_messages() {
    bool reading = true;
    while (reading) {
      auto event = reader_.next();
      if (!event) break;
      switch (event->kind) {
        case ws::Event::Kind::kMessage:
          // After a close is sent, the peer's data is ignored (RFC 6455
          // §5.5.1).
          if (!closing_) on_message(event->payload);
          break;
        case ws::Event::Kind::kPing:
          if (!closing_) {
            control_.push_back(
                ws::server_frame(ws::Opcode::kPong, event->payload));
          }
          break;
        case ws::Event::Kind::kPong:
          on_pong();
          break;
        case ws::Event::Kind::kClose:
          reading = false;
          if (closing_) {
            finish({}, "");  // the answer to our close
          } else {
            // The client's close, answered with its code.
            send_close(event->code == ws::kCloseNoStatus
                           ? std::string()
                           : ws::close_payload(event->code, ""),
                       /*then_drop=*/true);
          }
          break;
        case ws::Event::Kind::kViolation:
          reading = false;
          fail(event->code, event->reason);
          break;
      }
    }
    return reading;
  }

  // Closes with `code` after the client broke the protocol; the socket
  // goes once the close frame is written.
  void fail(std::uint16_t code, const std::string& reason) {
    if (closing_) return finish({}, "");
    close_reason_ = code == ws::kCloseMessageTooBig
                        ? "a message exceeded " +
                              std::to_string(options().max_frame_bytes) +
                              " bytes (closed with 1009)"
                        : "protocol error: " + reason + " (closed with " +
                              std::to_string(code) + ")";
    send_close(ws::close_payload(code, reason), /*then_drop=*/true);
  }

  // Queues the close frame carrying `payload` as the last frame: nothing
  // queued is written any more. With `then_drop` the socket goes once it
  // is written; else reading goes on for the client's answer. Either way a
  // client that does not read or answer has its socket torn down after
  // the handshake timeout.
  void send_close(std::string payload, bool then_drop) {
    closing_ = true;
    close_after_write_ = then_drop;
    queue().close();
    ++keepalive_generation_;
    keepalive_.cancel();
    teardown_.expires_after(options().handshake_timeout);
    teardown_.async_wait([self = self_ptr()](beast::error_code ec) {
      if (ec) return;
      beast::get_lowest_layer(self->ws_).close();
    });
    control_.push_back(ws::server_frame(ws::Opcode::kClose, payload));
  }

  // Writes the control frames waiting, then as many queued frames as fit
  // the batch, in one write; on_writer_idle() when there was nothing.
  void write_next() {
    if (writing_ || finished_) return;
    batch_.clear();
    std::size_t bytes = 0;
    for (std::string& frame : control_) {
      bytes += frame.size();
      batch_.push_back({std::move(frame), false});
    }
    control_.clear();
    bool queue_empty = false;
    if (!closing_ && bytes < kWriteBatchBytes) {
      queue_empty = queue().pop(kWriteBatchBytes - bytes, taken_) == 0;
      for (OutgoingFrame& next : taken_) {
        batch_.push_back({std::move(next).take(), true});
      }
      taken_.clear();
    }
    if (batch_.empty()) {
      if (queue_empty) on_writer_idle();
      return;
    }
    headers_.resize(batch_.size() * ws::kMaxServerHeader);
    buffers_.clear();
    for (std::size_t i = 0; i < batch_.size(); ++i) {
      const auto& [frame, needs_header] = batch_[i];
      if (needs_header) {
        const std::span<char, ws::kMaxServerHeader> header(
            headers_.data() + i * ws::kMaxServerHeader, ws::kMaxServerHeader);
        buffers_.emplace_back(
            header.data(),
            ws::server_header(ws::Opcode::kText, frame.size(), header));
      }
      buffers_.emplace_back(frame.data(), frame.size());
    }
    writing_ = true;
    net::async_write(stream(), buffers_,
                     [self = self_ptr()](beast::error_code ec, std::size_t) {
                       self->writing_ = false;
                       self->batch_.clear();
                       if (ec) return self->finish(ec, "");
                       if (self->close_after_write_ && self->control_.empty()) {
                         return self->finish({}, "");
                       }
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
    control_.push_back(ws::server_frame(ws::Opcode::kPing, ""));
    write_next();
    arm_keepalive(options().ping_timeout);
  }

  void on_pong() {
    if (!awaiting_pong_) return;
    awaiting_pong_ = false;
    arm_keepalive(options().ping_interval);
  }

  // Our close: the close frame goes after the write in flight, and reading
  // goes on until the client answers it.
  void do_close(std::uint16_t code, std::string reason) {
    if (closing_ || finished_) return;
    close_reason_ = reason;
    if (!accepted_) return finish({}, "");
    send_close(ws::close_payload(code, reason), /*then_drop=*/false);
    write_next();
  }

  // The end of the session, once: `ec` is what failed (none for a clean
  // close), `during` what was being done.
  void finish(beast::error_code ec, std::string_view during) {
    if (finished_) return;
    finished_ = true;
    closing_ = true;
    ++keepalive_generation_;
    keepalive_.cancel();
    teardown_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
    slot_.release();
    std::string why;
    if (!close_reason_.empty()) {
      why = close_reason_;
    } else if (!ec) {
      why = "";  // a close handshake
    } else if (!during.empty()) {
      why = std::string(during) + ": " + ec.message();
    } else if (ec != net::error::operation_aborted && ec != net::error::eof) {
      why = ec.message();
    }
    if (accepted_) on_closed(why);  // else it never counted as open
  }

  // Given back once the socket is closed (finish(), or at the latest
  // after ws_ is destroyed: declared before it).
  SocketSlots::Slot slot_;
  websocket::stream<NextLayer> ws_;
  beast::flat_buffer handshake_buffer_;
  http::request<http::empty_body> upgrade_;
  ws::FrameReader reader_;
  net::steady_timer keepalive_;
  net::steady_timer teardown_;
  std::vector<std::string> control_;  // whole frames, before queued ones
  // The write in flight: frames, and whether each still needs a header.
  std::vector<std::pair<std::string, bool>> batch_;
  std::vector<OutgoingFrame> taken_;  // from the queue, before encoding
  std::vector<char> headers_;
  std::vector<net::const_buffer> buffers_;
  std::string close_reason_;
  std::uint64_t keepalive_generation_ = 0;
  bool writing_ = false;
  bool awaiting_pong_ = false;
  bool closing_ = false;
  bool close_after_write_ = false;  // the socket goes once control_ is out
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

std::shared_ptr<Connection> start_session(tcp::socket socket,
                                          SocketSlots::Slot slot,
                                          ssl::context* tls,
                                          ServerContext& context) {
  std::string peer = peer_of(socket);
  if (tls) {
    auto session = std::make_shared<WsSession<TlsStream>>(
        context, std::move(peer), std::move(slot), std::move(socket), *tls);
    session->run();
    return session;
  }
  auto session = std::make_shared<WsSession<PlainStream>>(
      context, std::move(peer), std::move(slot), std::move(socket));
  session->run();
  return session;
}

}  // namespace parley::transport
