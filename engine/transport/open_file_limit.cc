#include "engine/transport/open_file_limit.h"

#include <sys/resource.h>

#include <limits>

namespace parley::transport {

namespace {

constexpr std::size_t kAssumedLimit = 1024;

std::size_t as_size(rlim_t limit) {
  if (limit == RLIM_INFINITY ||
      limit > std::numeric_limits<std::size_t>::max()) {
    return std::numeric_limits<std::size_t>::max();
  }
  return static_cast<std::size_t>(limit);
}

}  // namespace

std::size_t open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return kAssumedLimit;
  return as_size(limit.rlim_cur);
}

std::size_t raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return kAssumedLimit;
  if (limit.rlim_cur != limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    // Refused (a hard limit above the kernel's nr_open): keep the old one.
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return as_size(limit.rlim_cur);
}

}  // namespace parley::transport
