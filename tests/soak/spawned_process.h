// A child process whose stdout and stderr go to files (so it never blocks
// on a reader), signalled and reaped by its owner.
//
// Thread safety: none; owned by one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace parley::soak {

class SpawnedProcess {
 public:
  // Starts `argv[0]` (a path) with `argv`, stdout truncated into `out`,
  // stderr appended to `err`. Throws std::runtime_error when it cannot.
  SpawnedProcess(const std::vector<std::string>& argv,
                 const std::filesystem::path& out,
                 const std::filesystem::path& err);
  SpawnedProcess(const SpawnedProcess&) = delete;
  SpawnedProcess& operator=(const SpawnedProcess&) = delete;
  // Kills (SIGKILL) and reaps a child still running.
  ~SpawnedProcess();

  pid_t pid() const { return pid_; }
  bool running();
  void signal(int signal_number);
  // Waits at most `timeout` for the child to end; its exit code (128 +
  // the signal when a signal ended it), or nullopt when still running.
  std::optional<int> wait_for(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// What `path` holds now ("" when it cannot be read).
std::string read_text_file(const std::filesystem::path& path);

}  // namespace parley::soak
