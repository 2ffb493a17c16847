// The invariants a fuzz target asserts. FUZZ_CHECK holds in every build
// (NDEBUG or not): a failed check prints what failed and aborts, which
// libFuzzer reports as a crash and saves the input; the replay main
// (replay_main.cc) stops with the file that failed.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace parley::fuzz {

[[noreturn]] inline void check_failed(const char* condition, const char* file,
                                      int line, const std::string& detail) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n%s\n", file, line,
               condition, detail.c_str());
  std::abort();
}

}  // namespace parley::fuzz

// Aborts with `detail` (a std::string expression, evaluated only on
// failure) when `condition` is false.
#define FUZZ_CHECK(condition, detail)                              \
  do {                                                             \
    if (!(condition)) {                                            \
      ::parley::fuzz::check_failed(#condition, __FILE__, __LINE__, \
                                   std::string(detail));           \
    }                                                              \
  } while (false)
