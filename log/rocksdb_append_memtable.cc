#include "log/rocksdb_append_memtable.h"

#include "log/rocksdb_memtable_parts.h"

namespace parley::log::rocksdb_backend {
namespace {

using memtable::Entries;
using memtable::KeyComparator;
using memtable::SortedView;

// A view of the entries at its making; positions index the view.
class AppendIterator final : public rocksdb::MemTableRep::Iterator {
 public:
  AppendIterator(bool in_arena, const Entries& entries,
                 const KeyComparator& compare, const std::atomic<bool>& ordered)
      : view_(entries, ordered, compare),
        compare_(compare),
        position_(view_.size()),
        in_arena_(in_arena) {}
  AppendIterator(const AppendIterator&) = delete;
  AppendIterator& operator=(const AppendIterator&) = delete;
  ~AppendIterator() override {
    if (in_arena_) memtable::park_arena_iterator(this);
  }

  bool Valid() const override { return position_ < view_.size(); }
  const char* key() const override { return view_[position_]; }
  void Next() override { ++position_; }
  void Prev() override {
    position_ = position_ == 0 ? view_.size() : position_ - 1;
  }
  void Seek(const rocksdb::Slice& internal_key, const char*) override {
    position_ = view_.first_where(
        [&](const char* entry) { return compare_(entry, internal_key) >= 0; });
  }
  void SeekForPrev(const rocksdb::Slice& internal_key, const char*) override {
    const std::size_t after = view_.first_where(
        [&](const char* entry) { return compare_(entry, internal_key) > 0; });
    position_ = after == 0 ? view_.size() : after - 1;
  }
  void SeekToFirst() override { position_ = 0; }
  void SeekToLast() override {
    position_ = view_.size() == 0 ? 0 : view_.size() - 1;
  }

  // To the first entry >= `entry`, an entry's own encoding.
  void seek_entry(const char* entry) {
    position_ = view_.first_where(
        [&](const char* other) { return compare_(other, entry) >= 0; });
  }

 private:
  const SortedView view_;
  const KeyComparator& compare_;
  std::size_t position_;  // view_.size(): not valid
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
    AppendIterator it(false, entries_, compare_, ordered_);
    it.seek_entry(key);
    return it.Valid() && compare_(it.key(), key) == 0;
  }

  // RocksDB 7.8's MemTableRep::Get never frees the iterator it makes.
  void Get(const rocksdb::LookupKey& key, void* callback_args,
           bool (*callback)(void* arg, const char* entry)) override {
    AppendIterator it(false, entries_, compare_, ordered_);
    for (it.Seek(memtable::internal_key_of(key), nullptr);
         it.Valid() && callback(callback_args, it.key()); it.Next()) {
    }
  }

  std::size_t ApproximateMemoryUsage() override { return entries_.bytes(); }

  Iterator* GetIterator(rocksdb::Arena* arena) override {
    return memtable::make_iterator<AppendIterator>(arena, entries_, compare_,
                                                   ordered_);
  }

 private:
  static constexpr unsigned kFirstSegmentBits = 10;  // 1,024 entries

  const KeyComparator& compare_;
  Entries entries_{kFirstSegmentBits};
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
