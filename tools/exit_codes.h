// Exit codes of the parley binary (sysexits.h).
#pragma once

#include "log/error.h"

namespace parley::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 64;        // EX_USAGE
inline constexpr int kExitDataError = 65;    // EX_DATAERR
inline constexpr int kExitNoInput = 66;      // EX_NOINPUT
inline constexpr int kExitUnavailable = 69;  // EX_UNAVAILABLE
inline constexpr int kExitSoftware = 70;     // EX_SOFTWARE
inline constexpr int kExitIoError = 74;      // EX_IOERR

int exit_code_for(log::ErrorCode code);

}  // namespace parley::tools
