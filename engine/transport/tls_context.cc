#include "engine/transport/tls_context.h"

#include <boost/asio/ssl/context.hpp>
#include <string>
#include <string_view>
#include <system_error>

namespace parley::transport {
namespace {

// OpenSSL reports a missing file or a directory only as "asio.ssl error".
engine::Result<void> check_is_file(std::string_view what,
                                   const std::filesystem::path& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) {
    return engine::invalid("cannot use " + std::string(what) + " " +
                           path.string() + ": no such file");
  }
  if (!std::filesystem::is_regular_file(status)) {
    return engine::invalid("cannot use " + std::string(what) + " " +
                           path.string() + ": not a regular file");
  }
  return {};
}

}  // namespace

engine::Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(
    const std::filesystem::path& certificate_chain,
    const std::filesystem::path& private_key) {
  namespace ssl = boost::asio::ssl;
  if (auto found = check_is_file("TLS certificate", certificate_chain);
      !found) {
    return std::unexpected(found.error());
  }
  if (auto found = check_is_file("TLS private key", private_key); !found) {
    return std::unexpected(found.error());
  }
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
