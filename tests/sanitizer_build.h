// Which sanitizer a test is built with, under GCC's and clang's spellings:
// PARLEY_TEST_UNDER_ASAN and PARLEY_TEST_UNDER_TSAN are defined (to 1) when
// AddressSanitizer or ThreadSanitizer instruments the build.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define PARLEY_TEST_UNDER_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define PARLEY_TEST_UNDER_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(PARLEY_TEST_UNDER_ASAN)
#define PARLEY_TEST_UNDER_ASAN 1
#endif
#if __has_feature(thread_sanitizer) && !defined(PARLEY_TEST_UNDER_TSAN)
#define PARLEY_TEST_UNDER_TSAN 1
#endif
#endif
