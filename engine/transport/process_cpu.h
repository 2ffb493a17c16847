// The CPU time this process has used, for /metrics: in all (every thread
// it ever ran, as /proc/self/stat counts it) and per thread name, summed
// over the live threads that bear it (log/thread_name.h lists Parley's).
// User plus system time, in seconds, at the kernel's clock-tick
// resolution.
//
// Any thread.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace parley::transport {

struct ProcessCpu {
  std::optional<double> seconds;            // nullopt: /proc unreadable
  std::map<std::string, double> by_thread;  // thread name -> seconds
};

ProcessCpu process_cpu();

}  // namespace parley::transport
