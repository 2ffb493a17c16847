// The log family's memtable (log/rocksdb_append_memtable.h), through
// RocksDB itself: keys in order append, keys out of order still read back
// sorted, and readers see a consistent prefix while the writer appends.
#include "log/rocksdb_append_memtable.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "log/rocksdb_layout.h"
#include "tests/memtable_db.h"
#include "tests/test_support.h"

namespace parley {
namespace {

namespace layout = log::rocksdb_layout;

// A database whose default family uses the append memtable, large enough
// that nothing is flushed: every read below reads the memtable.
class AppendDb {
 public:
  explicit AppendDb(const std::filesystem::path& dir) : dir_(dir) { open(); }

  void reopen() {
    db_.reset();
    open();
  }

  void put(std::uint64_t key, std::string_view value) {
    REQUIRE(db_->Put(rocksdb::WriteOptions(), layout::encode_be64(key), value)
                .ok());
  }

  std::string get(std::uint64_t key) {
    std::string value;
    const rocksdb::Status status =
        db_->Get(rocksdb::ReadOptions(), layout::encode_be64(key), &value);
    return status.ok() ? value : status.ToString();
  }

  // Every key in order, forward or backward.
  std::vector<std::uint64_t> keys(bool backward = false) {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions()));
    std::vector<std::uint64_t> seen;
    if (backward) {
      for (it->SeekToLast(); it->Valid(); it->Prev()) seen.push_back(key(*it));
    } else {
      for (it->SeekToFirst(); it->Valid(); it->Next()) seen.push_back(key(*it));
    }
    REQUIRE(it->status().ok());
    return seen;
  }

  // The key a Seek (or SeekForPrev) to `target` lands on; 0 if none.
  std::uint64_t seek(std::uint64_t target, bool for_prev = false) {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions()));
    if (for_prev) {
      it->SeekForPrev(layout::encode_be64(target));
    } else {
      it->Seek(layout::encode_be64(target));
    }
    return it->Valid() ? key(*it) : 0;
  }

  rocksdb::DB& db() { return *db_; }

 private:
  static std::uint64_t key(const rocksdb::Iterator& it) {
    return layout::decode_be64(it.key().ToStringView()).value_or(0);
  }

  void open() {
    db_ = testing::open_memtable_db(
        dir_, log::rocksdb_backend::make_append_memtable_factory());
  }

  std::filesystem::path dir_;
  std::unique_ptr<rocksdb::DB> db_;
};

std::vector<std::uint64_t> one_to(std::uint64_t last) {
  std::vector<std::uint64_t> keys;
  for (std::uint64_t key = 1; key <= last; ++key) keys.push_back(key);
  return keys;
}

TEST_CASE("the append memtable reads keys written in order") {
  testing::ScratchDir dir;
  AppendDb db(dir.path());
  constexpr std::uint64_t kKeys = 5000;  // several of its segments
  for (std::uint64_t key = 2; key <= 2 * kKeys; key += 2) {
    db.put(key, "v" + std::to_string(key));
  }
  std::vector<std::uint64_t> even;
  for (std::uint64_t key = 2; key <= 2 * kKeys; key += 2) even.push_back(key);
  CHECK(db.keys() == even);
  CHECK(db.keys(true) == std::vector(even.rbegin(), even.rend()));
  CHECK(db.get(2) == "v2");
  CHECK(db.get(5000) == "v5000");
  CHECK(db.get(2 * kKeys) == "v" + std::to_string(2 * kKeys));
  CHECK(db.get(3) == "NotFound: ");
  CHECK(db.get(2 * kKeys + 2) == "NotFound: ");
  CHECK(db.seek(0) == 2);
  CHECK(db.seek(4001) == 4002);
  CHECK(db.seek(4002) == 4002);
  CHECK(db.seek(2 * kKeys + 1) == 0);
  CHECK(db.seek(4001, true) == 4000);
  CHECK(db.seek(1, true) == 0);
  CHECK(db.seek(2 * kKeys + 9, true) == 2 * kKeys);

  db.reopen();  // the WAL replayed into a new memtable
  CHECK(db.keys() == even);
  CHECK(db.get(4000) == "v4000");
}

TEST_CASE("the append memtable reads keys written out of order sorted") {
  testing::ScratchDir dir;
  AppendDb db(dir.path());
  for (std::uint64_t key = 1; key <= 100; ++key) db.put(key, "first");
  for (std::uint64_t key = 300; key > 100; --key) db.put(key, "backward");
  db.put(50, "second");  // the same key again: the newer value wins
  CHECK(db.keys() == one_to(300));
  CHECK(db.keys(true).front() == 300);
  CHECK(db.get(50) == "second");
  CHECK(db.get(49) == "first");
  CHECK(db.get(150) == "backward");
  CHECK(db.seek(100) == 100);
  CHECK(db.seek(301, true) == 300);

  db.reopen();
  CHECK(db.keys() == one_to(300));
  CHECK(db.get(50) == "second");
}

TEST_CASE("an iterator of the append memtable keeps its snapshot") {
  testing::ScratchDir dir;
  AppendDb db(dir.path());
  for (std::uint64_t key = 1; key <= 10; ++key) db.put(key, "x");
  std::unique_ptr<rocksdb::Iterator> it(
      db.db().NewIterator(rocksdb::ReadOptions()));
  for (std::uint64_t key = 11; key <= 3000; ++key) db.put(key, "x");
  int seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++seen;
  CHECK(seen == 10);
  CHECK(db.keys().size() == 3000);
}

TEST_CASE("readers of the append memtable see a dense prefix while it grows") {
  testing::ScratchDir dir;
  AppendDb db(dir.path());
  constexpr std::uint64_t kKeys = 60000;
  std::atomic<bool> done{false};
  std::atomic<int> gaps{0};
  std::atomic<std::uint64_t> reads{0};
  auto reader = [&] {
    while (!done.load()) {
      const std::vector<std::uint64_t> keys = db.keys();
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] != i + 1) {
          ++gaps;
          break;
        }
      }
      // The last key a snapshot held is found by a point read.
      if (!keys.empty() && db.get(keys.back()) != "v") ++gaps;
      ++reads;
    }
  };
  std::thread first(reader);
  std::thread second(reader);
  for (std::uint64_t key = 1; key <= kKeys; ++key) db.put(key, "v");
  done = true;
  first.join();
  second.join();
  CHECK(gaps.load() == 0);
  CHECK(reads.load() > 0);
  CHECK(db.keys() == one_to(kKeys));
}

}  // namespace
}  // namespace parley
