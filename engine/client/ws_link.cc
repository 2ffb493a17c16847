#include "engine/client/ws_link.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <charconv>
#include <deque>
#include <type_traits>
#include <unordered_map>

#include "engine/base/ids.h"
#include "engine/client/tls_trust_impl.h"
#include "engine/json/records_json.h"

namespace parley::client {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;
using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr auto kOpenTimeout = std::chrono::seconds(10);
// Frames from the hub may carry whole WALs (read_wal).
constexpr std::size_t kMaxMessage = std::size_t{256} << 20;

// `Stream`: beast::tcp_stream (ws://) or an ssl_stream over one (wss://).
template <typename Stream>
class WsLink : public Link,
               public std::enable_shared_from_this<WsLink<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;
  using std::enable_shared_from_this<WsLink<Stream>>::shared_from_this;

 public:
  WsLink(Strand strand, WsUrl url, std::shared_ptr<TlsTrust> tls,
         std::weak_ptr<LinkEvents> events,
         std::function<void(std::string_view)> log)
      : strand_(strand),
        url_(std::move(url)),
        tls_(std::move(tls)),
        events_(std::move(events)),
        log_(std::move(log)),
        resolver_(strand),
        ws_(make_stream(strand, tls_.get())) {}

  void open(std::function<void(Result<void>)> done) override {
    resolver_.async_resolve(
        url_.host, url_.port,
        [self = shared_from_this(), done = std::move(done)](
            beast::error_code ec, tcp::resolver::results_type found) mutable {
          if (ec) return self->fail_open(std::move(done), "resolve", ec);
          beast::get_lowest_layer(self->ws_).expires_after(kOpenTimeout);
          beast::get_lowest_layer(self->ws_).async_connect(
              found, [self, done = std::move(done)](
                         beast::error_code ec, const tcp::endpoint&) mutable {
                if (ec) return self->fail_open(std::move(done), "connect", ec);
                if constexpr (kTls) {
                  self->tls_handshake(std::move(done));
                } else {
                  self->handshake(std::move(done));
                }
              });
        });
  }

  void request(std::string op, json params,
               std::function<void(Result<json>)> done) override {
    if (!open_) {
      return post_failure(std::move(done), code::kDisconnected,
                          "not connected");
    }
    std::string request_id = engine::new_id();
    ordered_json frame;
    frame["request_id"] = request_id;
    frame["op"] = std::move(op);
    frame["params"] = std::move(params);
    frame["kind"] = "request";
    pending_.emplace(std::move(request_id), std::move(done));
    write(frame.dump());
  }

  void hello(HelloRequest hello,
             std::function<void(Result<void>)> done) override {
    if (!open_) {
      return post_failure(std::move(done), code::kDisconnected,
                          "not connected");
    }
    json claim = json::parse(hello.auth_claim, nullptr, false);
    if (claim.is_discarded()) claim = json::object();
    ordered_json frame;
    frame["name"] = std::move(hello.name);
    frame["auth_scheme"] = std::move(hello.auth_scheme);
    frame["auth_claim"] = std::move(claim);
    frame["since_envelope_id"] = hello.since_envelope_id
                                     ? json(*hello.since_envelope_id)
                                     : json(nullptr);
    frame["kind"] = "hello";
    hellos_.push_back(std::move(done));
    write(frame.dump());
  }

  void registered(const std::string&) override {}
  // The server unbinds an unregistered agent by itself.
  void unregistered(const std::string&) override {}

  void receipt(const std::string& recipient_id, const std::string& channel_id,
               const std::string& envelope_id, std::string_view status,
               std::string reason) override {
    if (!open_) return;
    ordered_json frame;
    frame["envelope_id"] = envelope_id;
    frame["status"] = status;
    frame["recipient_id"] = recipient_id;
    frame["channel_id"] = channel_id;
    frame["reason"] = std::move(reason);
    frame["kind"] = "receipt";
    write(frame.dump());
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    open_ = false;
    fail_pending(code::kClosed, "the client closed the connection");
    // The socket is closed outright (a close handshake could not start
    // while a write is in flight); the hub unbinds the agents either way.
    resolver_.cancel();
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
  }

 private:
  static websocket::stream<Stream> make_stream(Strand strand, TlsTrust* tls) {
    if constexpr (kTls) {
      return websocket::stream<Stream>(strand, tls->context);
    } else {
      return websocket::stream<Stream>(strand);
    }
  }

  // TLS before the WebSocket handshake (tls_trust.h).
  void tls_handshake(std::function<void(Result<void>)> done) {
    auto& tls = ws_.next_layer();
    beast::error_code ec;
    if (!expect_peer(tls, url_.host, ec)) {
      return fail_open(std::move(done), "TLS server name", ec);
    }
    tls.async_handshake(net::ssl::stream_base::client,
                        [self = shared_from_this(),
                         done = std::move(done)](beast::error_code ec) mutable {
                          if (ec)
                            return self->fail_open(std::move(done),
                                                   "TLS handshake", ec);
                          self->handshake(std::move(done));
                        });
  }

  template <typename T>
  void post_failure(std::function<void(Result<T>)> done, std::string_view code,
                    std::string message) {
    net::post(strand_, [done = std::move(done), code = std::string(code),
                        message = std::move(message)] {
      done(client_error(code, message));
    });
  }

  void fail_open(std::function<void(Result<void>)> done, std::string_view step,
                 beast::error_code ec) {
    done(client_error(code::kDisconnected,
                      "cannot connect to " +
                          std::string(kTls ? "wss://" : "ws://") + url_.host +
                          ":" + url_.port + url_.target + " (" +
                          std::string(step) + "): " + ec.message()));
  }

  void handshake(std::function<void(Result<void>)> done) {
    beast::get_lowest_layer(ws_).expires_never();
    ws_.set_option(
        websocket::stream_base::timeout::suggested(beast::role_type::client));
    ws_.read_message_max(kMaxMessage);
    ws_.async_handshake(
        url_.host + ":" + url_.port, url_.target,
        [self = shared_from_this(),
         done = std::move(done)](beast::error_code ec) mutable {
          if (ec) return self->fail_open(std::move(done), "handshake", ec);
          if (self->closed_) {
            return done(client_error(code::kClosed, "closed while opening"));
          }
          self->open_ = true;
          self->read();
          done({});
        });
  }

  void read() {
    ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec,
                                                        std::size_t) {
      if (self->closed_) return;
      if (ec) return self->lost("read: " + ec.message());
      std::string text = beast::buffers_to_string(self->buffer_.data());
      self->buffer_.consume(self->buffer_.size());
      self->dispatch(text);
      if (!self->closed_ && self->open_) self->read();
    });
  }

  void write(std::string frame) {
    outbox_.push_back(std::move(frame));
    if (!writing_) write_next();
  }

  void write_next() {
    if (outbox_.empty() || !open_) {
      writing_ = false;
      return;
    }
    writing_ = true;
    ws_.text(true);
    ws_.async_write(
        net::buffer(outbox_.front()),
        [self = shared_from_this()](beast::error_code ec, std::size_t) {
          if (self->closed_) return;
          if (ec) return self->lost("write: " + ec.message());
          self->outbox_.pop_front();
          self->write_next();
        });
  }

  void dispatch(const std::string& text) {
    json frame = json::parse(text, nullptr, false);
    if (frame.is_discarded() || !frame.is_object() || !frame.contains("kind") ||
        !frame["kind"].is_string()) {
      return log_("skipped a frame that is not a JSON object with a kind");
    }
    const std::string kind = frame["kind"];
    if (kind == "response") {
      on_response(frame);
    } else if (kind == "notify") {
      on_notify(frame);
    } else if (kind == "welcome") {
      complete_hello({});
    } else if (kind == "error") {
      const std::string code = frame.value("code", std::string(code::kError));
      const std::string message = frame.value("message", std::string());
      if (hellos_.empty()) {
        log_("the hub reported an error: " + code + ": " + message);
      } else {
        complete_hello(client_error(code, message));
      }
    } else if (kind == "ping") {
      write(R"({"kind": "pong"})");
    } else if (kind != "pong") {
      log_("skipped a frame of unknown kind '" + kind + "'");
    }
  }

  void on_response(const json& frame) {
    auto id = frame.find("request_id");
    if (id == frame.end() || !id->is_string()) {
      return log_("skipped a response without a request_id");
    }
    auto it = pending_.find(id->get<std::string>());
    if (it == pending_.end()) return;  // answered after its caller gave up
    auto done = std::move(it->second);
    pending_.erase(it);
    if (frame.value("ok", false)) {
      auto result = frame.find("result");
      done(result == frame.end() ? json(nullptr) : *result);
    } else {
      done(client_error(frame.value("error_code", std::string(code::kError)),
                        frame.value("error_message", std::string())));
    }
  }

  void on_notify(const json& frame) {
    auto envelope_json = frame.find("envelope");
    if (envelope_json == frame.end()) {
      return log_("skipped a notify without an envelope");
    }
    auto envelope = engine::envelope_from_json(*envelope_json);
    if (!envelope) {
      return log_("skipped a notify: " + envelope.error().message);
    }
    std::string recipient = frame.value("recipient_id", std::string());
    if (auto owner = events_.lock()) {
      owner->on_notify(std::move(recipient), std::move(*envelope));
    }
  }

  void complete_hello(Result<void> outcome) {
    if (hellos_.empty()) return log_("skipped an unexpected hello answer");
    auto done = std::move(hellos_.front());
    hellos_.pop_front();
    done(std::move(outcome));
  }

  void fail_pending(std::string_view code, const std::string& why) {
    auto pending = std::move(pending_);
    pending_.clear();
    auto hellos = std::move(hellos_);
    hellos_.clear();
    for (auto& [id, done] : pending) {
      post_failure(std::move(done), code, why);
    }
    for (auto& done : hellos) post_failure(std::move(done), code, why);
  }

  void lost(std::string why) {
    if (closed_) return;
    closed_ = true;
    open_ = false;
    log_("connection lost: " + why);
    fail_pending(code::kDisconnected, "connection lost: " + why);
    beast::error_code ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
    net::post(strand_, [events = events_, why = std::move(why)] {
      if (auto owner = events.lock()) owner->on_link_lost(why);
    });
  }

  Strand strand_;
  const WsUrl url_;
  const std::shared_ptr<TlsTrust> tls_;  // wss:// only; outlives ws_
  std::weak_ptr<LinkEvents> events_;
  std::function<void(std::string_view)> log_;
  tcp::resolver resolver_;
  websocket::stream<Stream> ws_;
  beast::flat_buffer buffer_;
  std::deque<std::string> outbox_;  // front: being written
  bool writing_ = false;
  bool open_ = false;
  bool closed_ = false;
  std::unordered_map<std::string, std::function<void(Result<json>)>> pending_;
  std::deque<std::function<void(Result<void>)>> hellos_;
};

}  // namespace

Result<WsUrl> parse_ws_url(std::string_view url) {
  WsUrl parsed;
  parsed.tls = url.starts_with("wss://");
  if (!parsed.tls && !url.starts_with("ws://")) {
    return client_error(code::kInvalid,
                        "a hub URL must start with ws:// or wss://, got '" +
                            std::string(url) + "'");
  }
  std::string_view rest = url.substr(parsed.tls ? 6 : 5);
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    parsed.target = std::string(rest.substr(slash));
    rest = rest.substr(0, slash);
  }
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 ||
      colon + 1 == rest.size()) {
    return client_error(
        code::kInvalid,
        "a hub URL needs ws://HOST:PORT or wss://HOST:PORT, got '" +
            std::string(url) + "'");
  }
  parsed.host = std::string(rest.substr(0, colon));
  parsed.port = std::string(rest.substr(colon + 1));
  unsigned port = 0;
  auto [end, ec] = std::from_chars(
      parsed.port.data(), parsed.port.data() + parsed.port.size(), port);
  if (ec != std::errc() || end != parsed.port.data() + parsed.port.size() ||
      port == 0 || port > 65535) {
    return client_error(code::kInvalid,
                        "bad port in hub URL '" + std::string(url) + "'");
  }
  if (parsed.host.starts_with('[') && parsed.host.ends_with(']')) {
    parsed.host = parsed.host.substr(1, parsed.host.size() - 2);
  }
  return parsed;
}

std::shared_ptr<Link> make_ws_link(Strand strand, WsUrl url,
                                   std::shared_ptr<TlsTrust> tls,
                                   std::weak_ptr<LinkEvents> events,
                                   std::function<void(std::string_view)> log) {
  if (url.tls) {
    return std::make_shared<WsLink<beast::ssl_stream<beast::tcp_stream>>>(
        std::move(strand), std::move(url), std::move(tls), std::move(events),
        std::move(log));
  }
  return std::make_shared<WsLink<beast::tcp_stream>>(
      std::move(strand), std::move(url), nullptr, std::move(events),
      std::move(log));
}

}  // namespace parley::client
