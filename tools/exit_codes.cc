#include "tools/exit_codes.h"

namespace parley::tools {

int exit_code_for(log::ErrorCode code) {
  switch (code) {
    case log::ErrorCode::kInvalidArgument:
      return kExitUsage;
    case log::ErrorCode::kCorruption:
    case log::ErrorCode::kVersionMismatch:
    case log::ErrorCode::kConflict:
      return kExitDataError;
    case log::ErrorCode::kNotFound:
      return kExitNoInput;
    case log::ErrorCode::kBusy:
    case log::ErrorCode::kClosed:
    case log::ErrorCode::kReadOnly:
    case log::ErrorCode::kUnavailable:
      return kExitUnavailable;
    case log::ErrorCode::kFailed:
    case log::ErrorCode::kIoError:
    case log::ErrorCode::kNoSpace:
      return kExitIoError;
  }
  return kExitSoftware;
}

}  // namespace parley::tools
