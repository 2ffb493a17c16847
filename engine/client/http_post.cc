#include "engine/client/http_post.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>
#include <memory>
#include <type_traits>

#include "engine/client/tls_trust_impl.h"

namespace parley::client {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

namespace {

// Responses carry a model's answer: a few MiB at most.
constexpr std::size_t kMaxResponse = std::size_t{64} << 20;

// One exchange; owns itself through the handlers it has in flight.
// `Stream`: beast::tcp_stream (http://) or an ssl_stream over one.
template <typename Stream>
class Exchange : public std::enable_shared_from_this<Exchange<Stream>> {
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;
  using std::enable_shared_from_this<Exchange<Stream>>::shared_from_this;

 public:
  Exchange(net::any_io_executor executor, HttpPost post,
           Handler<HttpResponse> done)
      : post_(std::move(post)),
        done_(std::move(done)),
        resolver_(executor),
        stream_(make_stream(executor, post_.tls.get())) {}

  void start() {
    beast::get_lowest_layer(stream_).expires_after(post_.timeout);
    resolver_.async_resolve(
        post_.url.host, post_.url.port,
        [self = shared_from_this()](beast::error_code ec,
                                    tcp::resolver::results_type found) {
          if (ec) return self->fail("resolve", ec);
          self->connect(found);
        });
  }

 private:
  static Stream make_stream(net::any_io_executor executor, TlsTrust* tls) {
    if constexpr (kTls) {
      return Stream(std::move(executor), tls->context);
    } else {
      return Stream(std::move(executor));
    }
  }

  void connect(const tcp::resolver::results_type& found) {
    beast::get_lowest_layer(stream_).async_connect(
        found, [self = shared_from_this()](beast::error_code ec,
                                           const tcp::endpoint&) {
          if (ec) return self->fail("connect", ec);
          if constexpr (kTls) {
            self->tls_handshake();
          } else {
            self->send();
          }
        });
  }

  void tls_handshake() {
    beast::error_code ec;
    if (!expect_peer(stream_, post_.url.host, ec)) {
      return fail("TLS server name", ec);
    }
    stream_.async_handshake(net::ssl::stream_base::client,
                            [self = shared_from_this()](beast::error_code ec) {
                              if (ec) return self->fail("TLS handshake", ec);
                              self->send();
                            });
  }

  void send() {
    request_.method(http::verb::post);
    request_.target(post_.url.target);
    request_.version(11);
    request_.set(http::field::host, post_.url.host);
    request_.set(http::field::content_type, "application/json");
    request_.set(http::field::user_agent, "parley");
    for (const auto& [name, value] : post_.headers) request_.set(name, value);
    request_.body() = std::move(post_.body);
    request_.prepare_payload();
    http::async_write(
        stream_, request_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec) return self->fail("send", ec);
          self->receive();
        });
  }

  void receive() {
    parser_.body_limit(kMaxResponse);
    http::async_read(
        stream_, buffer_, parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) {
          if (ec) return self->fail("read", ec);
          beast::error_code ignored;
          beast::get_lowest_layer(self->stream_)
              .socket()
              .shutdown(tcp::socket::shutdown_both, ignored);
          auto& response = self->parser_.get();
          self->done_(
              HttpResponse{response.result_int(), std::move(response.body())});
        });
  }

  void fail(std::string_view step, const beast::error_code& ec) {
    if (ec == beast::error::timeout) {
      return done_(client_error(
          code::kTimeout, "no HTTP response from " + post_.url.host + ":" +
                              post_.url.port + " within " +
                              std::to_string(post_.timeout.count()) + " ms"));
    }
    done_(client_error(code::kDisconnected,
                       "HTTP " + std::string(step) + " " + post_.url.host +
                           ":" + post_.url.port + ": " + ec.message()));
  }

  HttpPost post_;
  Handler<HttpResponse> done_;
  tcp::resolver resolver_;
  Stream stream_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response_parser<http::string_body> parser_;
};

std::unexpected<Error> bad_url(std::string_view url, std::string_view why) {
  return client_error(code::kInvalid,
                      std::string(why) + ", got '" + std::string(url) + "'");
}

}  // namespace

Result<HttpUrl> parse_http_url(std::string_view url) {
  HttpUrl parsed;
  parsed.tls = url.starts_with("https://");
  if (!parsed.tls && !url.starts_with("http://")) {
    return bad_url(url, "a model URL must start with http:// or https://");
  }
  if (parsed.tls) parsed.port = "443";
  std::string_view rest = url.substr(parsed.tls ? 8 : 7);
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    parsed.target = std::string(rest.substr(slash));
    rest = rest.substr(0, slash);
  }
  if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    parsed.port = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
    unsigned port = 0;
    auto [end, ec] = std::from_chars(
        parsed.port.data(), parsed.port.data() + parsed.port.size(), port);
    if (ec != std::errc() || end != parsed.port.data() + parsed.port.size() ||
        port == 0 || port > 65535) {
      return bad_url(url, "a model URL's port must be 1-65535");
    }
  }
  if (rest.empty()) return bad_url(url, "a model URL needs a host");
  parsed.host = std::string(rest);
  return parsed;
}

void http_post(net::any_io_executor executor, HttpPost post,
               Handler<HttpResponse> done) {
  if (post.url.tls) {
    std::make_shared<Exchange<beast::ssl_stream<beast::tcp_stream>>>(
        std::move(executor), std::move(post), std::move(done))
        ->start();
  } else {
    std::make_shared<Exchange<beast::tcp_stream>>(
        std::move(executor), std::move(post), std::move(done))
        ->start();
  }
}

}  // namespace parley::client
