#include "log/rocksdb_manifest_check.h"

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "log/crc32c.h"

namespace parley::log::rocksdb_backend {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBlockSize = 32768;
constexpr std::size_t kHeaderSize = 7;

std::uint32_t fixed(std::string_view bytes, std::size_t at, int width) {
  std::uint32_t value = 0;
  for (int i = width - 1; i >= 0; --i) {
    value = value << 8 | static_cast<std::uint8_t>(bytes[at + i]);
  }
  return value;
}

}  // namespace

std::optional<std::string> current_manifest_name(const fs::path& directory) {
  std::ifstream current_file(directory / "CURRENT");
  std::string current;
  if (!current_file || !std::getline(current_file, current) ||
      !current.starts_with("MANIFEST-") ||
      current.find_first_of("/, ") != std::string::npos) {
    return std::nullopt;
  }
  return current;
}

Result<void> check_manifest(const fs::path& directory,
                            const std::optional<ClosedManifest>& closed) {
  const std::optional<std::string> named = current_manifest_name(directory);
  if (!named) return {};
  const std::string& current = *named;
  const fs::path path = directory / current;
  std::ifstream file(path, std::ios::binary);
  std::error_code missing;
  if (!file && !fs::exists(path, missing)) {
    return {};  // a live writer moved to a new MANIFEST: RocksDB's to read
  }
  if (!file) {
    return std::unexpected(
        Error{ErrorCode::kIoError, "reading " + path.string()});
  }
  const std::string bytes((std::istreambuf_iterator<char>(file)),
                          std::istreambuf_iterator<char>());
  if (file.bad()) {
    return std::unexpected(
        Error{ErrorCode::kIoError, "reading " + path.string()});
  }
  auto damaged = [&](std::size_t at, const std::string& what) {
    return std::unexpected(Error{ErrorCode::kCorruption,
                                 "the MANIFEST (RocksDB's list of the "
                                 "store's files) " +
                                     current + " is damaged at byte " +
                                     std::to_string(at) + ": " + what});
  };
  // Records that begin before this byte must be whole.
  std::uint64_t whole_through = 0;
  if (closed && (closed->name.empty() || closed->name == current)) {
    whole_through = closed->size;
    if (!closed->name.empty() && bytes.size() < closed->size) {
      return damaged(bytes.size(),
                     "it ends there, short of the " +
                         std::to_string(closed->size) +
                         " bytes it held when the store was closed cleanly");
    }
  }
  std::size_t at = 0;
  while (at < bytes.size()) {
    const std::size_t block_left = kBlockSize - at % kBlockSize;
    if (block_left < kHeaderSize) {
      if (bytes.find_first_not_of('\0', at) < at + block_left) {
        return damaged(at, "a block's padding is not zeros");
      }
      at += block_left;
      continue;
    }
    if (bytes.size() - at < kHeaderSize) {
      if (at >= whole_through) return {};
      return damaged(at, "it ends with an incomplete record header");
    }
    const std::uint32_t stored = fixed(bytes, at, 4);
    const std::size_t length = fixed(bytes, at + 4, 2);
    const auto type = static_cast<std::uint8_t>(bytes[at + 6]);
    if (type < 1 || type > 4) {
      return damaged(at, "a record of unknown type " + std::to_string(type));
    }
    if (kHeaderSize + length > block_left) {
      return damaged(at, "a record runs past the end of its block");
    }
    if (bytes.size() - at < kHeaderSize + length) {
      if (at >= whole_through) return {};
      return damaged(at, "it ends with an incomplete record (" +
                             std::to_string(length) + " bytes announced, " +
                             std::to_string(bytes.size() - at - kHeaderSize) +
                             " there)");
    }
    if (crc32c_masked(std::string_view(bytes).substr(at + 6, 1 + length)) !=
        stored) {
      return damaged(at, "a record fails its checksum");
    }
    at += kHeaderSize + length;
  }
  return {};
}

}  // namespace parley::log::rocksdb_backend
