#include "log/rocksdb_append_memtable.h"

#include <rocksdb/memtablerep.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

namespace parley::log::rocksdb_backend {
namespace {

using KeyComparator = rocksdb::MemTableRep::KeyComparator;

// The entries, in insertion order: segment k holds kFirstSegment << k
// pointers, so entry i never moves and a segment is allocated once.
//
// One writer (RocksDB inserts into a memtable from one thread at a time
// unless IsInsertConcurrentlySupported()), any number of readers. The
// writer fills slot i, and the segment holding it, before it publishes
// size() = i + 1 (release); a reader reads only below the size() it loaded
// (acquire).
class Entries {
 public:
  Entries() = default;
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
  void push_back(const char* entry) {
    const std::size_t i = size_.load(std::memory_order_relaxed);
    const Slot slot = slot_of(i);
    if (slot.offset == 0) {
      const std::size_t length = kFirstSegment << slot.segment;
      segments_[slot.segment] = new const char*[length];
    }
    segments_[slot.segment][slot.offset] = entry;
    size_.store(i + 1, std::memory_order_release);
  }

  // What the segments allocated so far hold: those up to the last entry's.
  std::size_t bytes() const {
    const std::size_t entries = size();
    if (entries == 0) return 0;
    const std::size_t segments = slot_of(entries - 1).segment + 1;
    return kFirstSegment * ((std::size_t{1} << segments) - 1) *
           sizeof(const char*);
  }

 private:
  static constexpr std::size_t kFirstSegment = 1024;
  static constexpr std::size_t kSegments = 40;  // 2^50 entries

  struct Slot {
    std::size_t segment;
    std::size_t offset;
  };
  static Slot slot_of(std::size_t i) {
    const std::size_t segment =
        std::bit_width(i / kFirstSegment + 1) - std::size_t{1};
    return {segment, i - kFirstSegment * ((std::size_t{1} << segment) - 1)};
  }

  std::array<const char**, kSegments> segments_{};
  std::atomic<std::size_t> size_{0};
};

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

// The internal key `key` looks up. Throws std::logic_error if `key` does not
// have the layout above (a RocksDB this file was not written for).
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

// What RocksDB destroys in place: an iterator it asked to have made in its
// arena is destroyed with ~Iterator() alone, its memory left to the arena.
// This rep cannot reach RocksDB's arena (its class is not in the installed
// headers), so such an iterator is made with operator new and its memory
// is freed by the next such destruction on the same thread, or when the
// thread ends, when its destructor has surely returned.
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

// A snapshot of the entries at its making; positions index the snapshot.
class AppendIterator final : public rocksdb::MemTableRep::Iterator {
 public:
  AppendIterator(const Entries& entries, const KeyComparator& compare,
                 const std::atomic<bool>& ordered, bool in_arena)
      : entries_(entries),
        compare_(compare),
        size_(entries.size()),
        position_(size_),
        in_arena_(in_arena) {
    // Read after size_: an entry out of order that the snapshot holds was
    // flagged before it was published.
    if (!ordered.load(std::memory_order_relaxed)) sort_snapshot();
  }
  AppendIterator(const AppendIterator&) = delete;
  AppendIterator& operator=(const AppendIterator&) = delete;
  ~AppendIterator() override {
    if (in_arena_) parked_iterator.park(this);
  }

  bool Valid() const override { return position_ < size_; }
  const char* key() const override { return at(position_); }
  void Next() override { ++position_; }
  void Prev() override { position_ = position_ == 0 ? size_ : position_ - 1; }
  void Seek(const rocksdb::Slice& internal_key, const char*) override {
    position_ = first_where(
        [&](const char* entry) { return compare_(entry, internal_key) >= 0; });
  }
  void SeekForPrev(const rocksdb::Slice& internal_key, const char*) override {
    const std::size_t after = first_where(
        [&](const char* entry) { return compare_(entry, internal_key) > 0; });
    position_ = after == 0 ? size_ : after - 1;
  }
  void SeekToFirst() override { position_ = 0; }
  void SeekToLast() override { position_ = size_ == 0 ? 0 : size_ - 1; }

  // To the first entry >= `entry`, an entry's own encoding.
  void seek_entry(const char* entry) {
    position_ = first_where(
        [&](const char* other) { return compare_(other, entry) >= 0; });
  }

 private:
  // The first position whose entry satisfies `above` (false up to some
  // position, true from there on), or size_.
  template <typename Predicate>
  std::size_t first_where(const Predicate& above) const {
    std::size_t low = 0;
    std::size_t high = size_;
    while (low < high) {
      const std::size_t middle = low + (high - low) / 2;
      if (above(at(middle))) {
        high = middle;
      } else {
        low = middle + 1;
      }
    }
    return low;
  }

  const char* at(std::size_t i) const {
    return sorted_.empty() ? entries_[i] : sorted_[i];
  }
  void sort_snapshot() {
    sorted_.reserve(size_);
    for (std::size_t i = 0; i < size_; ++i) sorted_.push_back(entries_[i]);
    std::sort(
        sorted_.begin(), sorted_.end(),
        [this](const char* a, const char* b) { return compare_(a, b) < 0; });
  }

  const Entries& entries_;
  const KeyComparator& compare_;
  const std::size_t size_;
  std::vector<const char*> sorted_;  // the snapshot, sorted, if out of order
  std::size_t position_;             // size_: not valid
  const bool in_arena_;
};

class AppendRep final : public rocksdb::MemTableRep {
 public:
  AppendRep(const KeyComparator& compare, rocksdb::Allocator* allocator)
      : MemTableRep(allocator), compare_(compare) {}

  void Insert(rocksdb::KeyHandle handle) override {
    const char* entry = static_cast<const char*>(handle);
    if (entries_.size() > 0 && compare_(entries_.back(), entry) >= 0) {
      ordered_.store(false, std::memory_order_relaxed);
    }
    entries_.push_back(entry);
  }

  bool Contains(const char* key) const override {
    AppendIterator it(entries_, compare_, ordered_, false);
    it.seek_entry(key);
    return it.Valid() && compare_(it.key(), key) == 0;
  }

  // RocksDB 7.8's MemTableRep::Get never frees the iterator it makes.
  void Get(const rocksdb::LookupKey& key, void* callback_args,
           bool (*callback)(void* arg, const char* entry)) override {
    AppendIterator it(entries_, compare_, ordered_, false);
    for (it.Seek(internal_key_of(key), nullptr);
         it.Valid() && callback(callback_args, it.key()); it.Next()) {
    }
  }

  std::size_t ApproximateMemoryUsage() override { return entries_.bytes(); }

  Iterator* GetIterator(rocksdb::Arena* arena) override {
    if (arena == nullptr) {
      return new AppendIterator(entries_, compare_, ordered_, false);
    }
    void* memory = ::operator new(sizeof(AppendIterator));
    try {
      return new (memory) AppendIterator(entries_, compare_, ordered_, true);
    } catch (...) {
      ::operator delete(memory);
      throw;
    }
  }

 private:
  const KeyComparator& compare_;
  Entries entries_;
  std::atomic<bool> ordered_{true};
};

class AppendMemTableFactory final : public rocksdb::MemTableRepFactory {
 public:
  const char* Name() const override { return "parley.AppendMemTable"; }
  rocksdb::MemTableRep* CreateMemTableRep(const KeyComparator& compare,
                                          rocksdb::Allocator* allocator,
                                          const rocksdb::SliceTransform*,
                                          rocksdb::Logger*) override {
    return new AppendRep(compare, allocator);
  }
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> make_append_memtable_factory() {
  return std::make_shared<AppendMemTableFactory>();
}

}  // namespace parley::log::rocksdb_backend
