#include "tests/ws_test_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <variant>

namespace parley::testing {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

using PlainWs = websocket::stream<beast::tcp_stream>;
using TlsWs = websocket::stream<beast::ssl_stream<beast::tcp_stream>>;

std::atomic<std::uint64_t> next_request = 1;

}  // namespace

struct WsTestClient::Impl {
  net::io_context io;
  // Keeps run() going while no read is outstanding (pause_reading).
  net::executor_work_guard<net::io_context::executor_type> work =
      net::make_work_guard(io);
  ssl::context tls_context{ssl::context::tls_client};
  std::variant<std::unique_ptr<PlainWs>, std::unique_ptr<TlsWs>> ws;
  beast::flat_buffer buffer;
  std::thread thread;

  mutable std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::string> inbox;
  bool closed = false;
  int code = 0;
  std::string reason;
  bool paused = false;
  bool reading = false;

  std::deque<std::pair<std::string, bool>> outbox;  // text, binary
  bool writing = false;

  template <class F>
  void with_ws(F&& f) {
    std::visit([&](auto& stream) { f(*stream); }, ws);
  }

  void read() {
    with_ws([&](auto& stream) {
      reading = true;
      stream.async_read(buffer, [this](beast::error_code ec, std::size_t) {
        reading = false;
        std::lock_guard lock(mutex);
        if (ec) {
          closed = true;
          with_ws([&](auto& s) {
            code = s.reason().code;
            reason = std::string(s.reason().reason.c_str());
          });
          changed.notify_all();
          return;
        }
        inbox.push_back(beast::buffers_to_string(buffer.data()));
        buffer.consume(buffer.size());
        changed.notify_all();
        if (!paused) {
          net::post(io, [this] { read(); });
        }
      });
    });
  }

  void write_next() {
    if (writing || outbox.empty()) return;
    writing = true;
    // Not bindings: the lambda below captures binary, which clang 14
    // cannot.
    std::string text = std::move(outbox.front().first);
    const bool binary = outbox.front().second;
    outbox.pop_front();
    auto data = std::make_shared<std::string>(std::move(text));
    with_ws([&](auto& stream) {
      stream.binary(binary);
      stream.async_write(net::buffer(*data),
                         [this, data](beast::error_code, std::size_t) {
                           writing = false;
                           write_next();
                         });
    });
  }
};

WsTestClient::WsTestClient(std::string host, std::uint16_t port, bool tls)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  tcp::resolver resolver(s.io);
  auto endpoints = resolver.resolve(host, std::to_string(port));
  const std::string where = host + ":" + std::to_string(port);
  beast::error_code ec;
  if (tls) {
    s.tls_context.set_verify_mode(ssl::verify_none);
    auto stream = std::make_unique<TlsWs>(s.io, s.tls_context);
    beast::get_lowest_layer(*stream).connect(endpoints, ec);
    if (!ec) stream->next_layer().handshake(ssl::stream_base::client, ec);
    if (!ec) stream->handshake(where, "/", ec);
    s.ws = std::move(stream);
  } else {
    auto stream = std::make_unique<PlainWs>(s.io);
    beast::get_lowest_layer(*stream).connect(endpoints, ec);
    if (!ec) stream->handshake(where, "/", ec);
    s.ws = std::move(stream);
  }
  if (ec)
    throw std::runtime_error("cannot connect to " + where + ": " +
                             ec.message());
  s.with_ws([](auto& stream) { stream.read_message_max(256 << 20); });
  s.read();
  s.thread = std::thread([&s] { s.io.run(); });
}

WsTestClient::~WsTestClient() {
  Impl& s = *impl_;
  net::post(s.io, [&s] {
    s.with_ws([&](auto& stream) {
      beast::error_code ignored;
      beast::get_lowest_layer(stream).socket().close(ignored);
    });
  });
  s.io.stop();
  if (s.thread.joinable()) s.thread.join();
}

void WsTestClient::send_text(std::string text) {
  net::post(impl_->io, [this, text = std::move(text)]() mutable {
    impl_->outbox.emplace_back(std::move(text), false);
    impl_->write_next();
  });
}

void WsTestClient::send_binary(std::string bytes) {
  net::post(impl_->io, [this, bytes = std::move(bytes)]() mutable {
    impl_->outbox.emplace_back(std::move(bytes), true);
    impl_->write_next();
  });
}

std::optional<std::string> WsTestClient::next_text(
    std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->mutex);
  if (!impl_->changed.wait_for(
          lock, timeout,
          [&] { return !impl_->inbox.empty() || impl_->closed; }) ||
      impl_->inbox.empty()) {
    return std::nullopt;
  }
  std::string text = std::move(impl_->inbox.front());
  impl_->inbox.pop_front();
  return text;
}

std::optional<nlohmann::ordered_json> WsTestClient::next(
    std::chrono::milliseconds timeout) {
  auto text = next_text(timeout);
  if (!text) return std::nullopt;
  return nlohmann::ordered_json::parse(*text);
}

std::optional<nlohmann::ordered_json> WsTestClient::next_of_kind(
    std::string_view kind, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(impl_->mutex);
  std::size_t seen = 0;
  while (true) {
    for (; seen < impl_->inbox.size(); ++seen) {
      auto frame = nlohmann::ordered_json::parse(impl_->inbox[seen]);
      if (frame.value("kind", "") == kind) {
        impl_->inbox.erase(impl_->inbox.begin() +
                           static_cast<std::ptrdiff_t>(seen));
        return frame;
      }
    }
    if (impl_->closed) return std::nullopt;
    if (impl_->changed.wait_until(lock, deadline) == std::cv_status::timeout &&
        seen == impl_->inbox.size()) {
      return std::nullopt;
    }
  }
}

std::string WsTestClient::send_request(std::string_view op,
                                       const nlohmann::json& params) {
  const std::string id = "req-" + std::to_string(next_request++);
  send({{"request_id", id},
        {"op", std::string(op)},
        {"params", params},
        {"kind", "request"}});
  return id;
}

nlohmann::ordered_json WsTestClient::await_response(
    const std::string& request_id, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(impl_->mutex);
  std::size_t seen = 0;
  while (true) {
    for (; seen < impl_->inbox.size(); ++seen) {
      auto frame = nlohmann::ordered_json::parse(impl_->inbox[seen]);
      if (frame.value("kind", "") == "response" &&
          frame.value("request_id", "") == request_id) {
        impl_->inbox.erase(impl_->inbox.begin() +
                           static_cast<std::ptrdiff_t>(seen));
        return frame;
      }
    }
    if (impl_->closed) {
      throw std::runtime_error("connection closed awaiting " + request_id);
    }
    if (impl_->changed.wait_until(lock, deadline) == std::cv_status::timeout &&
        seen == impl_->inbox.size()) {
      throw std::runtime_error("no response to " + request_id);
    }
  }
}

nlohmann::ordered_json WsTestClient::request(
    std::string_view op, const nlohmann::json& params,
    std::chrono::milliseconds timeout) {
  return await_response(send_request(op, params), timeout);
}

nlohmann::ordered_json WsTestClient::call(std::string_view op,
                                          const nlohmann::json& params) {
  auto response = request(op, params);
  if (!response["ok"].get<bool>()) {
    throw std::runtime_error(std::string(op) + " failed: " + response.dump());
  }
  return response["result"];
}

std::string WsTestClient::register_agent(const std::string& name,
                                         nlohmann::json auth,
                                         nlohmann::json rule) {
  nlohmann::json passport = {{"name", name}};
  if (!auth.is_null()) passport["auth"] = std::move(auth);
  nlohmann::json params = {{"passport", passport},
                           {"resume", nlohmann::json::object()}};
  if (!rule.is_null()) params["rule"] = std::move(rule);
  return call("register", params)["agent_id"].get<std::string>();
}

void WsTestClient::pause_reading() {
  std::lock_guard lock(impl_->mutex);
  impl_->paused = true;
}

void WsTestClient::resume_reading() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->paused = false;
  }
  net::post(impl_->io, [this] {
    if (!impl_->reading && !impl_->closed) impl_->read();
  });
}

bool WsTestClient::wait_closed(std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->mutex);
  return impl_->changed.wait_for(lock, timeout, [&] { return impl_->closed; });
}

int WsTestClient::close_code() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->code;
}

std::string WsTestClient::close_reason() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->reason;
}

std::size_t WsTestClient::buffered() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->inbox.size();
}

}  // namespace parley::testing
