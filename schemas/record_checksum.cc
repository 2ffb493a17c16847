#include "schemas/record_checksum.h"

// XXH3's functions as the dispatching ones of Debian's libxxhash; its
// state type complete, for a state on the stack.
#define XXH_STATIC_LINKING_ONLY
#include <xxh_x86dispatch.h>

#include <cstring>

#include "parley/schemas/log_generated.h"

namespace parley::schema {

std::optional<std::size_t> record_checksum_offset(std::string_view record) {
  const auto* table = flatbuffers::GetRoot<flatbuffers::Table>(record.data());
  const flatbuffers::voffset_t field =
      table->GetOptionalFieldOffset(Record::VT_CHECKSUM);
  if (field == 0) return std::nullopt;
  return static_cast<std::size_t>(reinterpret_cast<const char*>(table) + field -
                                  record.data());
}

std::uint64_t record_checksum(std::string_view record, std::size_t offset) {
  const std::size_t after = offset + sizeof(std::uint64_t);
  // One-shot XXH3 over a contiguous copy beats the streaming API on
  // records of a few hundred bytes (58 against 69 ns for 467 bytes,
  // measured); both give the same hash.
  constexpr std::size_t kCopyLimit = 4096;
  if (record.size() <= kCopyLimit) {
    char covered[kCopyLimit];
    std::memcpy(covered, record.data(), offset);
    std::memcpy(covered + offset, record.data() + after, record.size() - after);
    return XXH3_64bits(covered, record.size() - sizeof(std::uint64_t));
  }
  XXH3_state_t state;
  XXH3_INITSTATE(&state);
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, record.data(), offset);
  XXH3_64bits_update(&state, record.data() + after, record.size() - after);
  return XXH3_64bits_digest(&state);
}

std::uint64_t stored_checksum(std::string_view record, std::size_t offset) {
  std::uint64_t stored = 0;
  std::memcpy(&stored, record.data() + offset, sizeof stored);
  return flatbuffers::EndianScalar(stored);
}

void stamp_checksum(std::span<char> record, std::size_t offset) {
  const std::uint64_t checksum = flatbuffers::EndianScalar(
      record_checksum({record.data(), record.size()}, offset));
  std::memcpy(record.data() + offset, &checksum, sizeof checksum);
}

std::uint64_t xxh3_64(std::string_view bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

}  // namespace parley::schema
