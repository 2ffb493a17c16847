#include "engine/transport/process_cpu.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

namespace parley::transport {
namespace {

struct StatLine {
  std::string name;
  double seconds = 0;
};

// A /proc stat line: "pid (comm) state ..." with utime and stime the 14th
// and 15th fields. The name may hold spaces and parentheses, so the fields
// are counted from its last ')'.
std::optional<StatLine> read_stat(const std::filesystem::path& path) {
  std::ifstream file(path);
  const std::string line((std::istreambuf_iterator<char>(file)),
                         std::istreambuf_iterator<char>());
  const std::size_t open = line.find('(');
  const std::size_t close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return std::nullopt;
  }
  std::istringstream fields(line.substr(close + 1));
  std::string skipped;
  for (int field = 3; field < 14; ++field) fields >> skipped;
  long long user_ticks = 0;
  long long system_ticks = 0;
  if (!(fields >> user_ticks >> system_ticks)) return std::nullopt;
  static const double tick = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  return StatLine{line.substr(open + 1, close - open - 1),
                  static_cast<double>(user_ticks + system_ticks) * tick};
}

}  // namespace

ProcessCpu process_cpu() {
  ProcessCpu cpu;
  if (auto process = read_stat("/proc/self/stat")) {
    cpu.seconds = process->seconds;
  }
  std::error_code error;
  for (std::filesystem::directory_iterator task("/proc/self/task", error);
       !error && task != std::filesystem::directory_iterator();
       task.increment(error)) {
    // A thread that ended since the listing has no stat to read: skipped.
    if (auto thread = read_stat(task->path() / "stat")) {
      cpu.by_thread[thread->name] += thread->seconds;
    }
  }
  return cpu;
}

}  // namespace parley::transport
