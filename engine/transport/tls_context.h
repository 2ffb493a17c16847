// The TLS server context for wss:// (OpenSSL through Boost.Asio).
#pragma once

#include <filesystem>
#include <memory>

#include "engine/base/error.h"

namespace boost::asio::ssl {
class context;
}

namespace parley::transport {

// TLS 1.2 or later, with the PEM certificate chain and private key at
// the given paths. Fails with kInvalid naming the file and OpenSSL's reason.
engine::Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(
    const std::filesystem::path& certificate_chain,
    const std::filesystem::path& private_key);

}  // namespace parley::transport
