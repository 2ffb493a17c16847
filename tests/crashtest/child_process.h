// A child process whose stdout the parent reads through a pipe, killed
// with a signal when the parent chooses. The child's stderr goes to a file.
//
// Thread safety: none; owned by one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace parley::crashtest {

class ChildProcess {
 public:
  // Starts `argv[0]` (a path) with `argv`; stderr appended to `stderr_file`.
  // Throws std::runtime_error when it cannot be started.
  ChildProcess(const std::vector<std::string>& argv,
               const std::filesystem::path& stderr_file);
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // Kills (SIGKILL) and reaps a child still running.
  ~ChildProcess();

  // Reads what the child writes until `done(output)` holds, the child
  // closes its stdout, or `deadline` passes. Returns whether `done` held.
  bool read_until(const std::function<bool(const std::string&)>& done,
                  std::chrono::steady_clock::time_point deadline);
  // Reads until the child closes its stdout or `deadline` passes.
  void drain(std::chrono::steady_clock::time_point deadline);

  void signal(int signal_number);
  // Reaps the child, waiting for it; returns the waitpid status.
  int wait();
  bool exited() const { return reaped_; }

  const std::string& output() const { return output_; }
  pid_t pid() const { return pid_; }

 private:
  // One read of what is there, waiting at most until `deadline`; false at
  // end of file or past the deadline.
  bool read_some(std::chrono::steady_clock::time_point deadline);

  pid_t pid_ = -1;
  int out_ = -1;
  bool eof_ = false;
  bool reaped_ = false;
  int status_ = 0;
  std::string output_;
};

}  // namespace parley::crashtest
