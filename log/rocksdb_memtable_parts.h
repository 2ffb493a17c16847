// Parts Parley's memtables (rocksdb_append_memtable.h,
// rocksdb_channel_memtable.h) share: an append-only array of entries that
// readers may read while one writer appends, a reader's sorted view of it,
// and what a MemTableRep needs of RocksDB beyond its installed headers.
//
// An entry is RocksDB's encoding of one key and value in a memtable
// (varint32 length | internal key | varint32 length | value), in memory
// RocksDB allocates; the memtables hold pointers to entries.
#pragma once

#include <rocksdb/memtablerep.h>

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <new>
#include <vector>

namespace parley::log::rocksdb_backend::memtable {

using KeyComparator = rocksdb::MemTableRep::KeyComparator;

// The entries, in insertion order: segment k holds 2^(first_bits + k)
// pointers, so entry i never moves and a segment is allocated once.
//
// One writer (RocksDB inserts into a memtable from one thread at a time
// unless IsInsertConcurrentlySupported()), any number of readers. The
// writer fills slot i, and the segment holding it, before it publishes
// size() = i + 1 (release); a reader reads only below the size() it loaded
// (acquire).
class Entries {
 public:
  explicit Entries(unsigned first_bits) : first_bits_(first_bits) {}
  Entries(const Entries&) = delete;
  Entries& operator=(const Entries&) = delete;
  ~Entries() {
    for (const char** segment : segments_) delete[] segment;
  }

  std::size_t size() const { return size_.load(std::memory_order_acquire); }
  const char* operator[](std::size_t i) const {
    const Slot slot = slot_of(i);
    return segments_[slot.segment][slot.offset];
  }

  // Writer only.
  const char* back() const {
    return (*this)[size_.load(std::memory_order_relaxed) - 1];
  }
  // Returns the bytes it allocated for a new segment, if it did.
  std::size_t push_back(const char* entry) {
    const std::size_t i = size_.load(std::memory_order_relaxed);
    const Slot slot = slot_of(i);
    std::size_t allocated = 0;
    if (slot.offset == 0) {
      const std::size_t length = std::size_t{1} << (first_bits_ + slot.segment);
      segments_[slot.segment] = new const char*[length];
      allocated = length * sizeof(const char*);
    }
    segments_[slot.segment][slot.offset] = entry;
    size_.store(i + 1, std::memory_order_release);
    return allocated;
  }

  // What the segments allocated so far hold: those up to the last entry's.
  std::size_t bytes() const {
    const std::size_t entries = size();
    if (entries == 0) return 0;
    const std::size_t segments = slot_of(entries - 1).segment + 1;
    return (((std::size_t{1} << segments) - 1) << first_bits_) *
           sizeof(const char*);
  }

 private:
  static constexpr std::size_t kSegments = 40;

  struct Slot {
    std::size_t segment;
    std::size_t offset;
  };
  Slot slot_of(std::size_t i) const {
    const std::size_t segment =
        std::bit_width((i >> first_bits_) + 1) - std::size_t{1};
    return {segment, i - (((std::size_t{1} << segment) - 1) << first_bits_)};
  }

  const unsigned first_bits_;
  std::array<const char**, kSegments> segments_{};
  std::atomic<std::size_t> size_{0};
};

// Entries [0, size) of an Entries as a reader found them, in key order: the
// entries themselves while they were appended in order, else a sorted copy.
class SortedView {
 public:
  SortedView() = default;
  // `ordered` is the writer's flag, cleared before it appends an entry out
  // of order; read after the size, so the view sorts whenever it holds one.
  SortedView(const Entries& entries, const std::atomic<bool>& ordered,
             const KeyComparator& compare);

  std::size_t size() const { return size_; }
  const char* operator[](std::size_t i) const {
    return sorted_.empty() ? (*entries_)[i] : sorted_[i];
  }

  // The first position whose entry satisfies `above` (false up to some
  // position, true from there on), or size().
  template <typename Predicate>
  std::size_t first_where(const Predicate& above) const {
    std::size_t low = 0;
    std::size_t high = size_;
    while (low < high) {
      const std::size_t middle = low + (high - low) / 2;
      if (above((*this)[middle])) {
        high = middle;
      } else {
        low = middle + 1;
      }
    }
    return low;
  }

 private:
  const Entries* entries_ = nullptr;
  std::size_t size_ = 0;
  std::vector<const char*> sorted_;
};

// The internal key a memtable Get looks up. Throws std::logic_error if
// rocksdb::LookupKey does not have the layout this build reads.
rocksdb::Slice internal_key_of(const rocksdb::LookupKey& key);

// An iterator for MemTableRep::GetIterator(arena): `It` is constructed as
// It(in_arena, args...), and one made in_arena calls
// park_arena_iterator(this) in its destructor.
//
// RocksDB destroys an iterator it asked to have made in its arena with
// ~Iterator() alone, leaving its memory to the arena, which a MemTableRep
// cannot reach (its class is not in the installed headers). Such an
// iterator is made with operator new instead, and its destructor parks its
// memory, to be freed by the next such destruction on the same thread, or
// when the thread ends, when its destructor has surely returned.
template <typename It, typename... Args>
rocksdb::MemTableRep::Iterator* make_iterator(rocksdb::Arena* arena,
                                              const Args&... args) {
  if (arena == nullptr) return new It(false, args...);
  void* memory = ::operator new(sizeof(It));
  try {
    return new (memory) It(true, args...);
  } catch (...) {
    ::operator delete(memory);
    throw;
  }
}
void park_arena_iterator(void* memory);

}  // namespace parley::log::rocksdb_backend::memtable
