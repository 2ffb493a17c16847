// Errors of the log layer, returned as values (std::expected).
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace parley::log {

enum class ErrorCode {
  kInvalidArgument,  // the caller's input is malformed; nothing was written
  kConflict,         // an idempotency key is already in the log
  kCorruption,       // bytes on disk fail a check; names what and where
  kIoError,          // the OS or RocksDB failed an operation
  kFailed,           // an earlier sync failed; the store refuses appends
  kClosed,           // the store was closed
  kBusy,             // the store is locked by another process
  kNotFound,         // no store at the path
  kVersionMismatch,  // the store's format version is not this build's
  kNoSpace,          // too little free disk space to append; nothing written
  kReadOnly,         // the store was opened read-only; nothing written
  kUnavailable,      // the database cannot be reached for now; appends are
                     // refused until resume() reconnects
};

// Whether appends refused with `code` may be accepted again after
// LogStore::resume() (a full disk, a lost database connection), rather
// than only after the store is reopened.
inline bool is_transient(ErrorCode code) {
  return code == ErrorCode::kNoSpace || code == ErrorCode::kUnavailable;
}

struct Error {
  ErrorCode code;
  std::string message;
};

template <typename T>
using Result = std::expected<T, Error>;

// The error of every call on a closed store.
inline std::unexpected<Error> closed_error() {
  return std::unexpected(Error{ErrorCode::kClosed, "log store is closed"});
}

// A stable lower-case name for the code, e.g. "corruption".
std::string_view to_string(ErrorCode code);

}  // namespace parley::log
