#include "log/rocksdb_clean_close.h"

#include <rocksdb/file_system.h>

#include <cstdio>
#include <string>

#include "schemas/record_checksum.h"

namespace parley::log::rocksdb_backend {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "parley clean close: last log sequence ";
constexpr std::string_view kHashSeparator = ", xxh3 ";

std::string hex(std::uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(value));
  return text;
}

std::string mark_text(std::uint64_t last_sequence) {
  const std::string text = std::string(kPrefix) + std::to_string(last_sequence);
  return text + std::string(kHashSeparator) + hex(schema::xxh3_64(text)) + "\n";
}

std::unexpected<Error> env_error(const std::string& what,
                                 const rocksdb::Status& status) {
  return std::unexpected(
      Error{status.IsNoSpace() ? ErrorCode::kNoSpace : ErrorCode::kIoError,
            what + ": " + status.ToString()});
}

Result<void> sync_directory(rocksdb::Env& env, const fs::path& directory) {
  std::unique_ptr<rocksdb::FSDirectory> handle;
  const auto& file_system = env.GetFileSystem();
  rocksdb::IOStatus status = file_system->NewDirectory(
      directory.string(), rocksdb::IOOptions(), &handle, nullptr);
  if (status.ok()) status = handle->Fsync(rocksdb::IOOptions(), nullptr);
  if (!status.ok()) return env_error("syncing " + directory.string(), status);
  return {};
}

}  // namespace

Result<std::optional<std::uint64_t>> read_clean_close(
    rocksdb::Env& env, const fs::path& directory) {
  const std::string path = (directory / kCleanCloseFile).string();
  rocksdb::Status exists = env.FileExists(path);
  if (exists.IsNotFound()) return std::nullopt;
  std::string text;
  rocksdb::Status status = rocksdb::ReadFileToString(&env, path, &text);
  // A writer opening the store removes the mark: gone since it was seen,
  // it is as if it had never been there.
  if (status.IsNotFound() || status.IsPathNotFound()) return std::nullopt;
  if (!status.ok()) return env_error("reading " + path, status);
  const std::size_t separator = text.find(kHashSeparator);
  std::optional<std::uint64_t> last;
  if (text.starts_with(kPrefix) && separator != std::string::npos) {
    const std::string digits =
        text.substr(kPrefix.size(), separator - kPrefix.size());
    if (!digits.empty() && digits.size() <= 19 &&
        digits.find_first_not_of("0123456789") == std::string::npos &&
        text == mark_text(std::stoull(digits))) {
      last = std::stoull(digits);
    }
  }
  if (!last) {
    return std::unexpected(Error{
        ErrorCode::kCorruption,
        "the clean-close mark " + path +
            " is damaged; remove it to open the store as after a crash (a "
            "torn WAL tail is then tolerated)"});
  }
  return last;
}

Result<void> write_clean_close(rocksdb::Env& env, const fs::path& directory,
                               std::uint64_t last_sequence) {
  const std::string path = (directory / kCleanCloseFile).string();
  const std::string temporary = path + ".tmp";
  rocksdb::Status status = rocksdb::WriteStringToFile(
      &env, mark_text(last_sequence), temporary, /*should_sync=*/true);
  if (status.ok()) status = env.RenameFile(temporary, path);
  if (!status.ok()) return env_error("writing " + path, status);
  return sync_directory(env, directory);
}

Result<void> remove_clean_close(rocksdb::Env& env, const fs::path& directory) {
  const std::string path = (directory / kCleanCloseFile).string();
  if (env.FileExists(path).IsNotFound()) return {};
  rocksdb::Status status = env.DeleteFile(path);
  if (!status.ok()) return env_error("removing " + path, status);
  return sync_directory(env, directory);
}

}  // namespace parley::log::rocksdb_backend
