// What the soak measures of the processes it runs: resident memory from
// /proc, and the server's Prometheus metrics over plain HTTP on loopback.
//
// Pure functions of the system's state; any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parley::soak {

// VmRSS of `pid` in KiB; nullopt when the process is gone.
std::optional<std::uint64_t> rss_kib(pid_t pid);

// The body of GET `path` from 127.0.0.1:`port`, or nullopt when it cannot
// be fetched (connection refused, no 200 answer) within a second.
std::optional<std::string> http_get(std::uint16_t port, std::string_view path);

// The value of the unlabelled sample `name` in Prometheus text `metrics`.
std::optional<double> metric(std::string_view metrics, std::string_view name);

// A loopback TCP port nothing listens on now (the kernel's pick), for a
// server that must keep its port across restarts.
std::uint16_t free_loopback_port();

}  // namespace parley::soak
