#include "log/rocksdb_layout.h"

#include <cstdint>

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

void append_to_index_run(std::string& run, std::uint64_t previous,
                         std::uint64_t log_sequence) {
  if (run.empty()) {
    run = encode_be64(log_sequence);
    return;
  }
  for (std::uint64_t distance = log_sequence - previous;; distance >>= 7) {
    if (distance < 0x80) {
      run.push_back(static_cast<char>(distance));
      return;
    }
    run.push_back(static_cast<char>((distance & 0x7f) | 0x80));
  }
}

bool decode_index_run(std::string_view bytes, std::vector<std::uint64_t>& out) {
  out.clear();
  if (bytes.size() < 8) return false;
  auto first = decode_be64(bytes.substr(0, 8));
  out.push_back(*first);
  std::uint64_t distance = 0;
  int shift = 0;
  for (char byte : bytes.substr(8)) {
    const std::uint64_t bits = static_cast<std::uint8_t>(byte) & 0x7f;
    // The tenth byte of a varint holds the 64th bit only.
    if (shift == 63 && bits > 1) return false;
    distance |= bits << shift;
    if (static_cast<std::uint8_t>(byte) & 0x80) {
      shift += 7;
      if (shift > 63) return false;
      continue;
    }
    if (distance == 0 || out.back() > UINT64_MAX - distance) return false;
    out.push_back(out.back() + distance);
    distance = 0;
    shift = 0;
  }
  return shift == 0;  // no varint left unfinished
}

}  // namespace parley::log::rocksdb_layout
