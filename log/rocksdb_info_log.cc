#include "log/rocksdb_info_log.h"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace parley::log::rocksdb_backend {
namespace {

// Opens <directory>/LOG at its first line: RocksDB creates a new store's
// directory before it logs anything.
class InfoLog final : public rocksdb::Logger {
 public:
  explicit InfoLog(std::filesystem::path directory)
      : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL),
        directory_(std::move(directory)) {}
  ~InfoLog() override {
    if (fd_ >= 0) ::close(fd_);
  }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list arguments) override {
    std::call_once(opened_, [this] {
      std::error_code ignored;
      std::filesystem::rename(directory_ / "LOG", directory_ / "LOG.old",
                              ignored);
      fd_ = ::open((directory_ / "LOG").c_str(),
                   O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    });
    if (fd_ < 0) return;
    char line[4096];
    timeval now{};
    gettimeofday(&now, nullptr);
    tm local{};
    localtime_r(&now.tv_sec, &local);
    int length = std::snprintf(
        line, sizeof line, "%04d/%02d/%02d-%02d:%02d:%02d.%06ld ",
        local.tm_year + 1900, local.tm_mon + 1, local.tm_mday, local.tm_hour,
        local.tm_min, local.tm_sec, static_cast<long>(now.tv_usec));
    va_list copy;
    va_copy(copy, arguments);
    const int text =
        std::vsnprintf(line + length, sizeof line - length - 1, format, copy);
    va_end(copy);
    if (text < 0) return;
    length = std::min<int>(length + text, sizeof line - 2);
    line[length++] = '\n';
    // One write per line (O_APPEND keeps lines whole); a failure drops it.
    (void)!::write(fd_, line, static_cast<std::size_t>(length));
  }

 private:
  const std::filesystem::path directory_;
  std::once_flag opened_;
  int fd_ = -1;  // set once, under opened_
};

}  // namespace

std::shared_ptr<rocksdb::Logger> make_info_log(
    const std::filesystem::path& directory) {
  return std::make_shared<InfoLog>(directory);
}

}  // namespace parley::log::rocksdb_backend
