#include "log/rocksdb_clean_close.h"

#include <rocksdb/file_system.h>

#include <cstdio>
#include <optional>
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

std::string mark_text(const CleanClose& mark) {
  std::string text = std::string(kPrefix) + std::to_string(mark.last_sequence);
  if (!mark.manifest.name.empty()) {
    text += ", " + mark.manifest.name + " of " +
            std::to_string(mark.manifest.size) + " bytes";
  }
  return text + std::string(kHashSeparator) + hex(schema::xxh3_64(text)) + "\n";
}

// `digits` as a number, if it is one that fits.
std::optional<std::uint64_t> number(std::string_view digits) {
  if (digits.empty() || digits.size() > 19 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return std::stoull(std::string(digits));
}

// The mark `text` holds, if it is one mark_text() wrote.
std::optional<CleanClose> parse_mark(std::string_view text) {
  const std::size_t separator = text.find(kHashSeparator);
  if (!text.starts_with(kPrefix) || separator == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view body =
      text.substr(kPrefix.size(), separator - kPrefix.size());
  CleanClose mark;
  const std::size_t comma = body.find(", ");
  if (comma != std::string_view::npos) {
    std::string_view manifest = body.substr(comma + 2);
    const std::size_t of = manifest.find(" of ");
    if (of == std::string_view::npos || !manifest.ends_with(" bytes")) {
      return std::nullopt;
    }
    mark.manifest.name = std::string(manifest.substr(0, of));
    auto size = number(manifest.substr(of + 4, manifest.size() - of - 4 - 6));
    if (!size || !mark.manifest.name.starts_with("MANIFEST-")) {
      return std::nullopt;
    }
    mark.manifest.size = *size;
    body = body.substr(0, comma);
  }
  auto last = number(body);
  if (!last) return std::nullopt;
  mark.last_sequence = *last;
  if (text != mark_text(mark)) return std::nullopt;
  return mark;
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

Result<std::optional<CleanClose>> read_clean_close(rocksdb::Env& env,
                                                   const fs::path& directory) {
  const std::string path = (directory / kCleanCloseFile).string();
  rocksdb::Status exists = env.FileExists(path);
  if (exists.IsNotFound()) return std::nullopt;
  std::string text;
  rocksdb::Status status = rocksdb::ReadFileToString(&env, path, &text);
  // A writer opening the store removes the mark: gone since it was seen,
  // it is as if it had never been there.
  if (status.IsNotFound() || status.IsPathNotFound()) return std::nullopt;
  if (!status.ok()) return env_error("reading " + path, status);
  std::optional<CleanClose> mark = parse_mark(text);
  if (!mark) {
    return std::unexpected(Error{
        ErrorCode::kCorruption,
        "the clean-close mark " + path +
            " is damaged; remove it to open the store as after a crash (a "
            "torn WAL tail is then tolerated)"});
  }
  return mark;
}

Result<void> write_clean_close(rocksdb::Env& env, const fs::path& directory,
                               std::uint64_t last_sequence) {
  std::optional<std::string> named = current_manifest_name(directory);
  if (!named) {
    return std::unexpected(
        Error{ErrorCode::kCorruption,
              (directory / "CURRENT").string() + " does not name a MANIFEST"});
  }
  CleanClose mark{.last_sequence = last_sequence,
                  .manifest = {.name = std::move(*named)}};
  const std::string manifest = (directory / mark.manifest.name).string();
  rocksdb::Status status = env.GetFileSize(manifest, &mark.manifest.size);
  if (!status.ok()) return env_error("reading " + manifest, status);
  const std::string path = (directory / kCleanCloseFile).string();
  const std::string temporary = path + ".tmp";
  status = rocksdb::WriteStringToFile(&env, mark_text(mark), temporary,
                                      /*should_sync=*/true);
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
