#include "log/rocksdb_wal_check.h"

#include <array>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>

namespace parley::log::rocksdb_backend {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBlockSize = 32768;
constexpr std::size_t kHeaderSize = 7;  // CRC (4), length (2), type (1)
constexpr std::uint8_t kFirstType = 1;  // full, first, middle, last: 1-4
constexpr std::uint8_t kLastType = 4;

bool is_wal_file(const fs::path& path) {
  const std::string name = path.filename().string();
  return path.extension() == ".log" && name.size() > 4 &&
         name.find_first_not_of("0123456789") == name.size() - 4;
}

// The first record of an unknown type in `file`, as a byte offset.
Result<std::optional<std::uint64_t>> find_unknown_type(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::error_code gone;
    if (!fs::exists(file, gone)) return std::nullopt;
    return std::unexpected(
        Error{ErrorCode::kIoError, "reading " + file.string()});
  }
  std::array<char, kBlockSize> block;
  for (std::uint64_t block_start = 0;; block_start += kBlockSize) {
    in.read(block.data(), block.size());
    const auto size = static_cast<std::size_t>(in.gcount());
    if (in.bad()) {
      return std::unexpected(
          Error{ErrorCode::kIoError, "reading " + file.string()});
    }
    std::size_t at = 0;
    while (at + kHeaderSize <= size) {
      const std::size_t length = static_cast<std::uint8_t>(block[at + 4]) |
                                 static_cast<std::uint8_t>(block[at + 5]) << 8;
      const auto type = static_cast<std::uint8_t>(block[at + 6]);
      if (type == 0 || at + kHeaderSize + length > kBlockSize) {
        return std::nullopt;  // unwritten space, or RocksDB's to report
      }
      if (type < kFirstType || type > kLastType) return block_start + at;
      at += kHeaderSize + length;
    }
    if (size < kBlockSize) return std::nullopt;
  }
}

}  // namespace

Result<void> check_wal_record_types(const fs::path& directory) {
  std::error_code error;
  for (const fs::directory_entry& entry :
       fs::directory_iterator(directory, error)) {
    if (!is_wal_file(entry.path())) continue;
    auto unknown = find_unknown_type(entry.path());
    if (!unknown) return std::unexpected(unknown.error());
    if (!*unknown) continue;
    return std::unexpected(
        Error{ErrorCode::kCorruption,
              "the write-ahead log " + entry.path().filename().string() +
                  " is damaged at byte " + std::to_string(**unknown) +
                  ": a record of a type this store never writes"});
  }
  if (error) {
    return std::unexpected(
        Error{ErrorCode::kIoError,
              "listing " + directory.string() + ": " + error.message()});
  }
  return {};
}

}  // namespace parley::log::rocksdb_backend
