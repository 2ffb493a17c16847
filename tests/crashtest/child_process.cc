#include "tests/crashtest/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>

extern char** environ;

namespace parley::crashtest {

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::filesystem::path& stderr_file) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  const int spawned = posix_spawn(&pid_, argv[0].c_str(), &actions, nullptr,
                                  args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    throw std::runtime_error("cannot start " + argv[0]);
  }
  out_ = pipe_fds[0];
}

ChildProcess::~ChildProcess() {
  if (!reaped_) {
    signal(SIGKILL);
    wait();
  }
  if (out_ >= 0) close(out_);
}

bool ChildProcess::read_some(std::chrono::steady_clock::time_point deadline) {
  if (eof_) return false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() < 0) return false;
  pollfd poll_fd{.fd = out_, .events = POLLIN, .revents = 0};
  const int ready = poll(&poll_fd, 1, static_cast<int>(left.count()) + 1);
  if (ready <= 0)
    return ready == 0 ? std::chrono::steady_clock::now() < deadline
                      : errno == EINTR;
  char buffer[8192];
  const ssize_t n = read(out_, buffer, sizeof buffer);
  if (n <= 0) {
    if (n < 0 && errno == EINTR) return true;
    eof_ = true;
    return false;
  }
  output_.append(buffer, static_cast<std::size_t>(n));
  return true;
}

bool ChildProcess::read_until(
    const std::function<bool(const std::string&)>& done,
    std::chrono::steady_clock::time_point deadline) {
  while (!done(output_)) {
    if (!read_some(deadline)) return done(output_);
  }
  return true;
}

void ChildProcess::drain(std::chrono::steady_clock::time_point deadline) {
  while (read_some(deadline)) {
  }
}

void ChildProcess::signal(int signal_number) {
  if (!reaped_) ::kill(pid_, signal_number);
}

int ChildProcess::wait() {
  if (!reaped_) {
    while (waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
  return status_;
}

}  // namespace parley::crashtest
