#include "log/rocksdb_memtable_parts.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace parley::log::rocksdb_backend::memtable {

SortedView::SortedView(const Entries& entries, const std::atomic<bool>& ordered,
                       const KeyComparator& compare)
    : entries_(&entries), size_(entries.size()) {
  if (ordered.load(std::memory_order_relaxed)) return;
  sorted_.reserve(size_);
  for (std::size_t i = 0; i < size_; ++i) sorted_.push_back(entries[i]);
  std::sort(
      sorted_.begin(), sorted_.end(),
      [&compare](const char* a, const char* b) { return compare(a, b) < 0; });
}

namespace {

// rocksdb::LookupKey, the key a memtable Get looks up, is declared but not
// defined by the installed headers. Its layout (db/dbformat.h, the same
// since LevelDB) starts with three pointers into one buffer holding
// varint32 length | user key | 8-byte tag: the memtable key's start, the
// internal key's start, and the end.
struct LookupKeyLayout {
  const char* start;
  const char* kstart;
  const char* end;
};

class ParkedMemory {
 public:
  ParkedMemory() = default;
  ParkedMemory(const ParkedMemory&) = delete;
  ParkedMemory& operator=(const ParkedMemory&) = delete;
  ~ParkedMemory() { park(nullptr); }
  void park(void* memory) {
    ::operator delete(parked_);
    parked_ = memory;
  }

 private:
  void* parked_ = nullptr;
};
thread_local ParkedMemory parked_iterator;

}  // namespace

rocksdb::Slice internal_key_of(const rocksdb::LookupKey& key) {
  LookupKeyLayout layout;
  std::memcpy(&layout, static_cast<const void*>(&key), sizeof layout);
  const auto start = reinterpret_cast<std::uintptr_t>(layout.start);
  const auto kstart = reinterpret_cast<std::uintptr_t>(layout.kstart);
  const auto end = reinterpret_cast<std::uintptr_t>(layout.end);
  // Before reading through them: a varint32 (1 to 5 bytes), then at least
  // the 8-byte tag.
  bool laid_out =
      start != 0 && kstart > start && kstart - start <= 5 && end >= kstart + 8;
  if (laid_out) {
    // The varint32: 7 bits a byte, low first; every byte but the last has
    // its high bit set.
    std::uint64_t length = 0;
    for (std::uintptr_t i = 0; i < kstart - start; ++i) {
      const auto byte = static_cast<std::uint8_t>(layout.start[i]);
      length |= std::uint64_t{byte & 0x7fU} << (7 * i);
      laid_out = laid_out && ((byte & 0x80U) != 0) == (i + 1 < kstart - start);
    }
    laid_out = laid_out && length == end - kstart;
  }
  if (!laid_out) {
    throw std::logic_error(
        "rocksdb::LookupKey is not laid out as this build of Parley reads it");
  }
  return {layout.kstart, end - kstart};
}

void park_arena_iterator(void* memory) { parked_iterator.park(memory); }

}  // namespace parley::log::rocksdb_backend::memtable
