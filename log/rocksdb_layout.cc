#include "log/rocksdb_layout.h"

namespace parley::log::rocksdb_layout {

bool readable_format_version(std::string_view version) {
  return version.size() == 1 && version >= kOldestFormatVersion &&
         version <= kFormatVersion;
}

std::string encode_be64(std::uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 7; i >= 0; --i, value >>= 8) {
    bytes[i] = static_cast<char>(value & 0xff);
  }
  return bytes;
}

std::optional<std::uint64_t> decode_be64(std::string_view bytes) {
  if (bytes.size() != 8) return std::nullopt;
  std::uint64_t value = 0;
  for (char byte : bytes) value = value << 8 | static_cast<std::uint8_t>(byte);
  return value;
}

std::string channel_prefix(std::string_view channel) {
  std::string prefix(1, static_cast<char>(channel.size()));
  prefix.append(channel);
  return prefix;
}

std::string channel_key(std::string_view channel,
                        std::uint64_t channel_sequence) {
  return channel_prefix(channel) + encode_be64(channel_sequence);
}

}  // namespace parley::log::rocksdb_layout
