#include "log/error.h"

namespace parley::log {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kConflict:
      return "conflict";
    case ErrorCode::kCorruption:
      return "corruption";
    case ErrorCode::kIoError:
      return "io_error";
    case ErrorCode::kFailed:
      return "failed";
    case ErrorCode::kClosed:
      return "closed";
    case ErrorCode::kBusy:
      return "busy";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kVersionMismatch:
      return "version_mismatch";
    case ErrorCode::kNoSpace:
      return "no_space";
    case ErrorCode::kReadOnly:
      return "read_only";
    case ErrorCode::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

}  // namespace parley::log
