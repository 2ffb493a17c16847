#include "engine/base/error.h"

namespace parley::engine {

std::string_view wire_code(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNotFound:
      return "not_found";
    case ErrorKind::kAccessDenied:
      return "access_denied";
    case ErrorKind::kProtocol:
      return "protocol_error";
    case ErrorKind::kAuthFailed:
      return "auth_failed";
    case ErrorKind::kInboxFull:
    case ErrorKind::kInvalid:
    case ErrorKind::kConflict:
    case ErrorKind::kStorage:
      return "error";
  }
  return "error";
}

std::unexpected<Error> storage_error(const log::Error& error) {
  return std::unexpected(
      Error{ErrorKind::kStorage,
            std::string(log::to_string(error.code)) + ": " + error.message,
            error.code});
}

}  // namespace parley::engine
