// Internal to the client: TlsTrust's definition and the peer check its
// streams share (ws_link.cc, http_post.cc). Includes Asio's SSL.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl.hpp>
#include <string>

#include "engine/client/tls_trust.h"

namespace parley::client {

class TlsTrust {
 public:
  boost::asio::ssl::context context{boost::asio::ssl::context::tls_client};
};

// Prepares `stream` (an ssl_stream, before its handshake) to verify the
// peer as `host`, and to send `host` as SNI unless it is an IP address.
// False, with `ec` set, when OpenSSL refuses the name.
template <typename SslStream>
bool expect_peer(SslStream& stream, const std::string& host,
                 boost::system::error_code& ec) {
  namespace ssl = boost::asio::ssl;
  boost::system::error_code not_an_address;
  (void)boost::asio::ip::make_address(host, not_an_address);
  if (not_an_address &&
      !SSL_set_tlsext_host_name(stream.native_handle(), host.c_str())) {
    ec.assign(static_cast<int>(::ERR_get_error()),
              boost::asio::error::get_ssl_category());
    return false;
  }
  stream.set_verify_mode(ssl::verify_peer);
  stream.set_verify_callback(ssl::host_name_verification(host));
  return true;
}

}  // namespace parley::client
