// Errors of the engine, returned as values (std::expected).
//
// Each kind maps to one AG2 wire code (wire_code()); the message is AG2's
// exact text for that failure.
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "log/error.h"

namespace parley::engine {

enum class ErrorKind {
  kNotFound,      // "not_found": an agent, channel, adapter or task is missing
  kAccessDenied,  // "access_denied": a rule or the connection refuses it
  kProtocol,      // "protocol_error": the channel or its adapter refuses it
  kAuthFailed,    // "auth_failed": credentials do not check out
  kInboxFull,     // "error": a recipient's inbox is at capacity
  kInvalid,       // "error": a malformed argument (AG2's ValueError/KeyError)
  kConflict,      // "error": an idempotency key reused with another payload
  kStorage,       // "error": the log refused or failed the write
};

struct Error {
  ErrorKind kind;
  std::string message;
  // Set when the log failed the operation (kind kStorage): what the log
  // said, for callers that act on it (exit codes, full-disk recovery).
  std::optional<log::ErrorCode> log_code;
};

template <typename T>
using Result = std::expected<T, Error>;

// AG2's wire code for the kind: "not_found", "access_denied",
// "protocol_error", "auth_failed" or "error".
std::string_view wire_code(ErrorKind kind);

inline std::unexpected<Error> fail(ErrorKind kind, std::string message) {
  return std::unexpected(Error{kind, std::move(message)});
}
inline std::unexpected<Error> not_found(std::string message) {
  return fail(ErrorKind::kNotFound, std::move(message));
}
inline std::unexpected<Error> protocol_error(std::string message) {
  return fail(ErrorKind::kProtocol, std::move(message));
}
inline std::unexpected<Error> access_denied(std::string message) {
  return fail(ErrorKind::kAccessDenied, std::move(message));
}
inline std::unexpected<Error> invalid(std::string message) {
  return fail(ErrorKind::kInvalid, std::move(message));
}

// A failure of the log as the engine reports it: kStorage with the log's
// code, and the message "<code>: <log's message>".
std::unexpected<Error> storage_error(const log::Error& error);

}  // namespace parley::engine
