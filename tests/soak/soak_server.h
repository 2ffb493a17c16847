// `parley serve` as the soak runs it: a child process on a fixed loopback
// port (kept across restarts, so clients reconnect to the same URL), with
// the admin port for /metrics and sweeps every second.
//
// Thread safety: none; owned by the soak's main thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "tests/soak/spawned_process.h"

namespace parley::soak {

class SoakServer {
 public:
  // Files go to `dir`: the store in dir/store, each start's stdout in
  // dir/serve-<n>.out, stderr appended to dir/serve.err.
  SoakServer(std::string parley, std::filesystem::path dir,
             std::size_t memtable_bytes);

  // Starts generation `generation` and waits until it listens. Throws
  // std::runtime_error when it does not within 30 s.
  void start(int generation);
  // SIGTERM (a drain), then waits up to 60 s; the exit code, or nullopt
  // when it had to be killed.
  std::optional<int> stop();

  std::filesystem::path store() const { return dir_ / "store"; }
  std::string url() const;
  std::optional<std::uint64_t> rss_kib() const;
  // GET /metrics, or "" when it cannot be fetched.
  std::string metrics() const;

 private:
  std::string parley_;
  std::filesystem::path dir_;
  std::size_t memtable_bytes_;
  std::uint16_t port_ = 0;
  std::uint16_t admin_port_ = 0;
  std::unique_ptr<SpawnedProcess> process_;
};

}  // namespace parley::soak
