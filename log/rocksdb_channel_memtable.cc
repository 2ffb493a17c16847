#include "log/rocksdb_channel_memtable.h"

#include <algorithm>
#include <cstdint>
#include <functional>  // std::equal_to
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "log/rocksdb_memtable_parts.h"
#include "log/shared_mutex.h"
#include "log/string_map.h"
#include "log/thread_annotations.h"

namespace parley::log::rocksdb_backend {
namespace {

using memtable::Entries;
using memtable::KeyComparator;
using memtable::SortedView;

// The user key of an internal key: all but its 8-byte tag.
std::string_view user_key_of(rocksdb::Slice internal_key) {
  return {internal_key.data(),
          internal_key.size() >= 8 ? internal_key.size() - 8 : 0};
}

// What the keys of one channel share: u8 n and the n bytes of the channel
// id; a key shorter than that (Parley writes none) is a partition of its
// own. Ordering these prefixes bytewise orders the partitions as their keys
// are ordered: two prefixes either differ in a byte both hold, as do all
// their keys, or one is a whole key that every key of the other extends.
std::string_view prefix_of(std::string_view user_key) {
  if (user_key.empty()) return user_key;
  const std::size_t length =
      1 + std::size_t{static_cast<std::uint8_t>(user_key[0])};
  return user_key.substr(0, std::min(length, user_key.size()));
}

// One channel's entries.
struct Partition {
  explicit Partition(std::string_view key_prefix) : prefix(key_prefix) {}
  // Grows from 4 entries: a memtable may hold a few entries of many
  // channels.
  static constexpr unsigned kFirstSegmentBits = 2;

  const std::string prefix;
  Entries entries{kFirstSegmentBits};
  std::atomic<bool> ordered{true};  // cleared before an entry out of order
};

// The partitions by prefix, in key order; keys view each partition's own
// prefix. Nodes are only ever added: an iterator into it stays valid.
using Directory = std::map<std::string_view, std::unique_ptr<Partition>>;

// About what a channel's directory node and lookup-table node take.
constexpr std::size_t kNodeBytes = 112;

class ChannelRep final : public rocksdb::MemTableRep {
 public:
  ChannelRep(const KeyComparator& compare, rocksdb::Allocator* allocator)
      : MemTableRep(allocator), compare_(compare) {}

  void Insert(rocksdb::KeyHandle handle) override {
    const char* entry = static_cast<const char*>(handle);
    Partition& partition =
        partition_for(prefix_of(user_key_of(compare_.decode_key(entry))));
    Entries& entries = partition.entries;
    if (entries.size() > 0 && compare_(entries.back(), entry) >= 0) {
      partition.ordered.store(false, std::memory_order_relaxed);
    }
    if (const std::size_t allocated = entries.push_back(entry)) {
      add_bytes(allocated);
    }
  }

  bool Contains(const char* key) const override;
  // RocksDB 7.8's MemTableRep::Get never frees the iterator it makes.
  void Get(const rocksdb::LookupKey& key, void* callback_args,
           bool (*callback)(void* arg, const char* entry)) override;

  // Read by RocksDB after every insert: kept as a running total.
  std::size_t ApproximateMemoryUsage() override {
    return bytes_.load(std::memory_order_relaxed);
  }

  Iterator* GetIterator(rocksdb::Arena* arena) override;

 private:
  friend class ChannelIterator;

  // Writer only.
  Partition& partition_for(std::string_view prefix) {
    if (auto found = by_prefix_.find(prefix); found != by_prefix_.end()) {
      return *found->second;
    }
    auto made = std::make_unique<Partition>(prefix);
    Partition& partition = *made;
    {
      WriterLock lock(directory_mutex_);
      directory_.emplace(partition.prefix, std::move(made));
    }
    by_prefix_.emplace(partition.prefix, &partition);
    add_bytes(sizeof(Partition) + prefix.size() + kNodeBytes);
    return partition;
  }
  void add_bytes(std::size_t bytes) {
    bytes_.store(bytes_.load(std::memory_order_relaxed) + bytes,
                 std::memory_order_relaxed);
  }

  const KeyComparator& compare_;
  // The writer's way to a channel's partition, without the directory lock.
  std::unordered_map<std::string_view, Partition*, StringHash, std::equal_to<>>
      by_prefix_;
  // Readers hold it shared while they move between partitions; the writer
  // holds it to add one.
  mutable SharedMutex directory_mutex_;
  Directory directory_ GUARDED_BY(directory_mutex_);
  std::atomic<std::size_t> bytes_{0};  // written by the writer only
};

// Walks the partitions in directory order and each partition's entries as
// it found them on entering it (SortedView). Partitions made after the
// iterator are seen if it reaches them; RocksDB hides what is newer than a
// reader's sequence number.
class ChannelIterator final : public rocksdb::MemTableRep::Iterator {
 public:
  ChannelIterator(bool in_arena, const ChannelRep& rep);
  ChannelIterator(const ChannelIterator&) = delete;
  ChannelIterator& operator=(const ChannelIterator&) = delete;
  ~ChannelIterator() override {
    if (in_arena_) memtable::park_arena_iterator(this);
  }

  bool Valid() const override { return valid_; }
  const char* key() const override { return view_[position_]; }
  void Next() override;
  void Prev() override;
  void Seek(const rocksdb::Slice& internal_key, const char*) override;
  void SeekForPrev(const rocksdb::Slice& internal_key, const char*) override;
  void SeekToFirst() override;
  void SeekToLast() override;

 private:
  // To the first entry of the first partition from `at` that has one.
  void forward_from(Directory::const_iterator at)
      REQUIRES_SHARED(rep_.directory_mutex_);
  // To the last entry of the last partition before `before` that has one.
  void backward_from(Directory::const_iterator before)
      REQUIRES_SHARED(rep_.directory_mutex_);
  void enter(Directory::const_iterator at);

  const ChannelRep& rep_;
  const KeyComparator& compare_;
  Directory::const_iterator partition_;  // read only with the directory held
  SortedView view_;                      // the partition's entries
  std::size_t position_ = 0;             // into view_, while valid_
  bool valid_ = false;
  const bool in_arena_;
};

ChannelIterator::ChannelIterator(bool in_arena, const ChannelRep& rep)
    : rep_(rep), compare_(rep.compare_), in_arena_(in_arena) {}

void ChannelIterator::enter(Directory::const_iterator at) {
  partition_ = at;
  const Partition& partition = *at->second;
  view_ = SortedView(partition.entries, partition.ordered, compare_);
}

void ChannelIterator::forward_from(Directory::const_iterator at) {
  for (; at != rep_.directory_.end(); ++at) {
    enter(at);
    if (view_.size() > 0) {
      position_ = 0;
      valid_ = true;
      return;
    }
  }
  valid_ = false;
}

void ChannelIterator::backward_from(Directory::const_iterator before) {
  while (before != rep_.directory_.begin()) {
    enter(--before);
    if (view_.size() > 0) {
      position_ = view_.size() - 1;
      valid_ = true;
      return;
    }
  }
  valid_ = false;
}

void ChannelIterator::Next() {
  if (++position_ < view_.size()) return;
  ReaderLock lock(rep_.directory_mutex_);
  forward_from(std::next(partition_));
}

void ChannelIterator::Prev() {
  if (position_ > 0) {
    --position_;
    return;
  }
  ReaderLock lock(rep_.directory_mutex_);
  backward_from(partition_);
}

void ChannelIterator::Seek(const rocksdb::Slice& internal_key, const char*) {
  const std::string_view prefix = prefix_of(user_key_of(internal_key));
  ReaderLock lock(rep_.directory_mutex_);
  auto at = rep_.directory_.lower_bound(prefix);
  if (at != rep_.directory_.end() && at->first == prefix) {
    enter(at);
    position_ = view_.first_where(
        [&](const char* entry) { return compare_(entry, internal_key) >= 0; });
    if (position_ < view_.size()) {
      valid_ = true;
      return;
    }
    ++at;
  }
  forward_from(at);
}

// As RocksDB's own memtable iterator does it (it never calls this one's):
// the first entry at or after the target, then back while past it.
void ChannelIterator::SeekForPrev(const rocksdb::Slice& internal_key,
                                  const char*) {
  Seek(internal_key, nullptr);
  if (!valid_) SeekToLast();
  while (valid_ && compare_(key(), internal_key) > 0) Prev();
}

void ChannelIterator::SeekToFirst() {
  ReaderLock lock(rep_.directory_mutex_);
  forward_from(rep_.directory_.begin());
}

void ChannelIterator::SeekToLast() {
  ReaderLock lock(rep_.directory_mutex_);
  backward_from(rep_.directory_.end());
}

bool ChannelRep::Contains(const char* key) const {
  ChannelIterator it(false, *this);
  it.Seek(compare_.decode_key(key), key);
  return it.Valid() && compare_(it.key(), key) == 0;
}

void ChannelRep::Get(const rocksdb::LookupKey& key, void* callback_args,
                     bool (*callback)(void* arg, const char* entry)) {
  ChannelIterator it(false, *this);
  for (it.Seek(memtable::internal_key_of(key), nullptr);
       it.Valid() && callback(callback_args, it.key()); it.Next()) {
  }
}

rocksdb::MemTableRep::Iterator* ChannelRep::GetIterator(rocksdb::Arena* arena) {
  return memtable::make_iterator<ChannelIterator>(arena, *this);
}

class ChannelMemTableFactory final : public rocksdb::MemTableRepFactory {
 public:
  const char* Name() const override { return "parley.ChannelMemTable"; }
  rocksdb::MemTableRep* CreateMemTableRep(const KeyComparator& compare,
                                          rocksdb::Allocator* allocator,
                                          const rocksdb::SliceTransform*,
                                          rocksdb::Logger*) override {
    return new ChannelRep(compare, allocator);
  }
};

}  // namespace

std::shared_ptr<rocksdb::MemTableRepFactory> make_channel_memtable_factory() {
  return std::make_shared<ChannelMemTableFactory>();
}

}  // namespace parley::log::rocksdb_backend
