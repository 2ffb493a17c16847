// What the client's TLS connections (wss:// hubs, https:// models) trust:
// TLS 1.2 or later, the peer's certificate chained to a trusted CA and
// naming the host connected to (DNS name, or IP address in its
// subjectAltName; the name is also sent as SNI).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "engine/client/error.h"

namespace parley::client {

// Opaque: an OpenSSL client context (the Asio one), kept out of headers.
class TlsTrust;

// Trusts the CAs in the PEM file `ca_file`, or without one the system's.
// Fails with kInvalid naming an unreadable file.
Result<std::shared_ptr<TlsTrust>> make_tls_trust(
    const std::optional<std::filesystem::path>& ca_file);

}  // namespace parley::client
