#include "engine/transport/tls_context.h"

#include <boost/asio/ssl/context.hpp>

namespace parley::transport {

engine::Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(
    const std::filesystem::path& certificate_chain,
    const std::filesystem::path& private_key) {
  namespace ssl = boost::asio::ssl;
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds |
                       ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                       ssl::context::single_dh_use);
  boost::system::error_code ec;
  context->use_certificate_chain_file(certificate_chain.string(), ec);
  if (ec) {
    return engine::invalid("cannot use TLS certificate " +
                           certificate_chain.string() + ": " + ec.message());
  }
  context->use_private_key_file(private_key.string(), ssl::context::pem, ec);
  if (ec) {
    return engine::invalid("cannot use TLS private key " +
                           private_key.string() + ": " + ec.message());
  }
  return context;
}

}  // namespace parley::transport
