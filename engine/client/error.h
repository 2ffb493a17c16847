// What a client call fails with: the hub's error exactly as it answered
// (its wire code and message), or the client's own failure (a timeout, a
// lost or closed connection, an argument refused before anything was sent).
//
// A hub error carries the same code and message over both links: in-process
// the op layer's ErrorKind is mapped with engine::wire_code(), over the wire
// the response's error_code and error_message are kept as they are.
#pragma once

#include <expected>
#include <functional>
#include <string>
#include <string_view>

#include "engine/base/error.h"

namespace parley::client {

// The hub's codes (engine::wire_code) and the client's own.
namespace code {
inline constexpr std::string_view kNotFound = "not_found";
inline constexpr std::string_view kAccessDenied = "access_denied";
inline constexpr std::string_view kProtocol = "protocol_error";
inline constexpr std::string_view kAuthFailed = "auth_failed";
inline constexpr std::string_view kError = "error";  // any other hub error
// The client's: no answer within the call's timeout (the hub may still
// carry the call out).
inline constexpr std::string_view kTimeout = "timeout";
// The connection ended before the hub answered (the call may or may not
// have been carried out).
inline constexpr std::string_view kDisconnected = "disconnected";
// The client (or the HumanClient) was closed or disconnected by its owner.
inline constexpr std::string_view kClosed = "closed";
// Refused by the client before anything was sent (AG2's client-side
// ValueError), or an answer the client could not read.
inline constexpr std::string_view kInvalid = "invalid";
}  // namespace code

struct Error {
  std::string code;
  std::string message;

  // Whether the hub answered with this error (rather than the client
  // failing on its own).
  bool from_hub() const;
};

template <typename T>
using Result = std::expected<T, Error>;

// A completion handler: told the outcome once, on the client's strand.
template <typename T>
using Handler = std::function<void(Result<T>)>;

// The hub's error as the wire carries it.
Error from_engine(const engine::Error& error);

inline std::unexpected<Error> client_error(std::string_view code,
                                           std::string message) {
  return std::unexpected(Error{std::string(code), std::move(message)});
}

}  // namespace parley::client
