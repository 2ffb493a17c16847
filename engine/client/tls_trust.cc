#include "engine/client/tls_trust.h"

#include "engine/client/tls_trust_impl.h"

namespace parley::client {

namespace ssl = boost::asio::ssl;

Result<std::shared_ptr<TlsTrust>> make_tls_trust(
    const std::optional<std::filesystem::path>& ca_file) {
  auto trust = std::make_shared<TlsTrust>();
  trust->context.set_options(ssl::context::default_workarounds |
                             ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                             ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  if (ca_file) {
    trust->context.load_verify_file(ca_file->string(), ec);
  } else {
    trust->context.set_default_verify_paths(ec);
  }
  if (ec) {
    return client_error(
        code::kInvalid,
        "cannot load the CAs to trust for TLS from " +
            (ca_file ? ca_file->string() : std::string("the system")) + ": " +
            ec.message());
  }
  return trust;
}

}  // namespace parley::client
