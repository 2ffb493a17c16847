// The input format of fuzz_records: a stream of log records, each a
// 2-byte little-endian length and that many bytes; a length running past
// the end takes what is left. So any byte string is a stream, and a
// record's bytes reach the verifier exactly as given.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace parley::fuzz {

inline std::vector<std::string_view> split_records(
    std::span<const std::uint8_t> input) {
  std::vector<std::string_view> records;
  const char* bytes = reinterpret_cast<const char*>(input.data());
  std::size_t at = 0;
  while (at + 2 <= input.size()) {
    std::size_t size = input[at] | (std::size_t{input[at + 1]} << 8);
    at += 2;
    size = std::min(size, input.size() - at);
    records.emplace_back(bytes + at, size);
    at += size;
  }
  return records;
}

// `record` framed for split_records (at most 65535 bytes).
inline void append_record(std::string& stream, std::string_view record) {
  stream += static_cast<char>(record.size() & 0xff);
  stream += static_cast<char>((record.size() >> 8) & 0xff);
  stream += record;
}

}  // namespace parley::fuzz
