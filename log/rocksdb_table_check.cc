#include "log/rocksdb_table_check.h"

// XXH3's functions as the dispatching ones of Debian's libxxhash.
#include <xxh_x86dispatch.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

namespace parley::log::rocksdb_backend {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kFooterSize = 53;
constexpr std::size_t kTrailerSize = 5;
constexpr std::uint64_t kBlockBasedMagic = 0x88e241b785f4cff7ull;
constexpr std::uint8_t kXxh3Checksum = 4;
constexpr std::string_view kPropertiesBlock = "rocksdb.properties";

struct BlockHandle {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

std::uint32_t fixed32(std::string_view bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) {
    value = value << 8 | static_cast<std::uint8_t>(bytes[at + i]);
  }
  return value;
}

// Reads a varint from `bytes` at `at`, advancing it; nullopt when it runs
// past the end or over 10 bytes.
std::optional<std::uint64_t> varint(std::string_view bytes, std::size_t& at) {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64 && at < bytes.size(); shift += 7) {
    const auto byte = static_cast<std::uint8_t>(bytes[at++]);
    value |= std::uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return std::nullopt;
}

std::optional<BlockHandle> handle(std::string_view bytes, std::size_t& at) {
  auto offset = varint(bytes, at);
  if (!offset) return std::nullopt;
  auto size = varint(bytes, at);
  if (!size) return std::nullopt;
  return BlockHandle{*offset, *size};
}

class TableFile {
 public:
  explicit TableFile(const fs::path& path) : path_(path) {}

  Result<void> check() {
    std::error_code error;
    size_ = fs::file_size(path_, error);
    if (error) return io("reading its size: " + error.message());
    stream_.open(path_, std::ios::binary);
    if (!stream_) return io("opening it");
    // A file without a whole footer is one RocksDB was writing when a
    // crash, a power cut or a live writer stopped it: RocksDB deletes it
    // when no MANIFEST entry names it, and refuses the store naming it
    // when one does ("file is too short", "bad table magic number").
    if (size_ < kFooterSize) return {};
    std::string footer;
    if (auto read = read_at(size_ - kFooterSize, kFooterSize, footer); !read) {
      return read;
    }
    const std::uint64_t magic = fixed32(footer, kFooterSize - 8) |
                                std::uint64_t{fixed32(footer, kFooterSize - 4)}
                                    << 32;
    if (magic != kBlockBasedMagic) return {};
    const std::uint32_t version = fixed32(footer, kFooterSize - 12);
    const auto checksum_type = static_cast<std::uint8_t>(footer[0]);
    if (version < 2 || version > 5 || checksum_type != kXxh3Checksum) {
      return {};  // not a layout this check knows: RocksDB's to check
    }
    std::size_t at = 1;
    auto metaindex = handle(footer, at);
    if (!metaindex) return damaged("its footer is malformed");
    std::string block;
    if (auto read = read_block(*metaindex, "metaindex", block); !read) {
      return read;
    }
    auto properties = find_entry(block, kPropertiesBlock);
    if (!properties) return damaged("its metaindex block is malformed");
    if (!*properties) return {};  // no properties block: nothing parsed
    return read_block(**properties, "properties", block);
  }

 private:
  std::unexpected<Error> damaged(const std::string& what) const {
    return std::unexpected(Error{ErrorCode::kCorruption,
                                 "the table file " + path_.filename().string() +
                                     " is damaged: " + what});
  }
  std::unexpected<Error> io(const std::string& what) const {
    return std::unexpected(
        Error{ErrorCode::kIoError,
              "checking the table file " + path_.string() + ": " + what});
  }

  Result<void> read_at(std::uint64_t offset, std::uint64_t length,
                       std::string& out) {
    out.resize(length);
    stream_.clear();
    stream_.seekg(static_cast<std::streamoff>(offset));
    stream_.read(out.data(), static_cast<std::streamsize>(length));
    if (!stream_) return io("reading " + std::to_string(length) + " bytes");
    return {};
  }

  // Reads the block `where` points at into `out` (without its trailer)
  // and checks it against its trailer.
  Result<void> read_block(const BlockHandle& where, const std::string& name,
                          std::string& out) {
    if (where.offset > size_ || where.size > size_ ||
        where.offset + where.size + kTrailerSize > size_ - kFooterSize) {
      return damaged("its " + name + " block lies outside the file");
    }
    if (auto read = read_at(where.offset, where.size + kTrailerSize, out);
        !read) {
      return read;
    }
    const auto type = static_cast<std::uint8_t>(out[where.size]);
    const std::uint32_t stored = fixed32(out, where.size + 1);
    const std::uint32_t computed =
        static_cast<std::uint32_t>(XXH3_64bits(out.data(), where.size)) ^
        static_cast<std::uint32_t>(type) * 0x6b9083d9u;
    if (stored != computed) {
      return damaged("its " + name + " block fails its checksum");
    }
    out.resize(where.size);
    return {};
  }

  // The handle of the metaindex entry named `name` (nullopt inside: none);
  // nullopt when the block is malformed.
  static std::optional<std::optional<BlockHandle>> find_entry(
      std::string_view block, std::string_view name) {
    if (block.size() < 4) return std::nullopt;
    const std::uint32_t restarts =
        fixed32(block, block.size() - 4) & 0x7fffffffu;
    if (restarts == 0 || (block.size() - 4) / 4 < restarts) return std::nullopt;
    const std::size_t end = block.size() - 4 - std::size_t{restarts} * 4;
    std::string key;
    for (std::size_t at = 0; at < end;) {
      auto shared = varint(block, at);
      auto unshared = shared ? varint(block, at) : std::nullopt;
      auto length = unshared ? varint(block, at) : std::nullopt;
      if (!length || *shared > key.size() || *unshared > end - at ||
          *length > end - at - *unshared) {
        return std::nullopt;
      }
      key.resize(*shared);
      key.append(block.substr(at, *unshared));
      at += *unshared;
      std::string_view value = block.substr(at, *length);
      at += *length;
      if (key == name) {
        std::size_t in_value = 0;
        auto found = handle(value, in_value);
        if (!found) return std::nullopt;
        return std::optional<BlockHandle>(*found);
      }
    }
    return std::optional<BlockHandle>();
  }

  const fs::path path_;
  std::uint64_t size_ = 0;
  std::ifstream stream_;
};

}  // namespace

Result<void> check_table_file(const fs::path& file) {
  return TableFile(file).check();
}

Result<void> check_table_files(const fs::path& directory) {
  std::error_code error;
  if (!fs::exists(directory / "CURRENT", error)) return {};  // no store
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    if (entry.path().extension() != ".sst") continue;
    auto checked = check_table_file(entry.path());
    // A live primary may delete an obsolete table file meanwhile.
    if (!checked && checked.error().code == ErrorCode::kIoError &&
        !fs::exists(entry.path(), error)) {
      continue;
    }
    if (!checked) return checked;
  }
  if (error) {
    return std::unexpected(
        Error{ErrorCode::kIoError,
              "listing " + directory.string() + ": " + error.message()});
  }
  return {};
}

}  // namespace parley::log::rocksdb_backend
