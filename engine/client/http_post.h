// One HTTP/1.1 POST (Boost.Beast) for the model seam: http:// URLs, one
// connection per call, a deadline over the whole exchange. https:// is
// refused (TLS is not built yet).
//
// Threading: `done` is called once, on `executor`.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/client/error.h"

namespace parley::client {

// http://HOST[:PORT][/PATH] (port 80 by default).
struct HttpUrl {
  std::string host;
  std::string port = "80";
  std::string target = "/";
};
Result<HttpUrl> parse_http_url(std::string_view url);

struct HttpPost {
  HttpUrl url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // sent as application/json
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
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
