// One HTTP/1.1 POST (Boost.Beast) for the model seam: http:// or https://
// (with the checks of tls_trust.h), one connection per call, a deadline
// over the whole exchange.
//
// Threading: `done` is called once, on `executor`.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/client/error.h"
#include "engine/client/tls_trust.h"

namespace parley::client {

// http://HOST[:PORT][/PATH] (port 80 by default) or https://… (443).
struct HttpUrl {
  std::string host;
  std::string port = "80";
  std::string target = "/";
  bool tls = false;  // https://
};
Result<HttpUrl> parse_http_url(std::string_view url);

struct HttpPost {
  HttpUrl url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // sent as application/json
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
  std::shared_ptr<TlsTrust> tls;  // required for https://
};

struct HttpResponse {
  unsigned status = 0;
  std::string body;
};

// kTimeout when the deadline passed, kDisconnected when the exchange
// failed (naming the step and the system's message).
void http_post(boost::asio::any_io_executor executor, HttpPost post,
               Handler<HttpResponse> done);

}  // namespace parley::client
