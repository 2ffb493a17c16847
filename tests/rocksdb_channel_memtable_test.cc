// The channel index's memtable (log/rocksdb_channel_memtable.h), through
// RocksDB itself and against a sorted model: keys of many channels read
// back in key order every way RocksDB reads a memtable, keys out of order
// and deletions still read right, and readers see each channel's keys
// densely while the writer appends.
#include "log/rocksdb_channel_memtable.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "log/rocksdb_layout.h"
#include "tests/memtable_db.h"
#include "tests/test_support.h"

namespace parley {
namespace {

namespace layout = log::rocksdb_layout;

// A database whose default family uses the channel memtable, large enough
// that nothing is flushed unless asked: reads read the memtable.
class ChannelDb {
 public:
  explicit ChannelDb(const std::filesystem::path& dir) : dir_(dir) { open(); }

  void reopen() {
    db_.reset();
    open();
  }
  void flush() { REQUIRE(db_->Flush(rocksdb::FlushOptions()).ok()); }

  void put(const std::string& key, const std::string& value) {
    REQUIRE(db_->Put(rocksdb::WriteOptions(), key, value).ok());
  }
  void remove(const std::string& key) {
    REQUIRE(db_->Delete(rocksdb::WriteOptions(), key).ok());
  }

  std::optional<std::string> get(const std::string& key) {
    std::string value;
    const rocksdb::Status status =
        db_->Get(rocksdb::ReadOptions(), key, &value);
    REQUIRE((status.ok() || status.IsNotFound()));
    if (status.IsNotFound()) return std::nullopt;
    return value;
  }

  // Every key in order, forward or backward.
  std::vector<std::string> keys(bool backward = false) {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions()));
    std::vector<std::string> seen;
    if (backward) {
      for (it->SeekToLast(); it->Valid(); it->Prev()) {
        seen.push_back(it->key().ToString());
      }
    } else {
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        seen.push_back(it->key().ToString());
      }
    }
    REQUIRE(it->status().ok());
    return seen;
  }

  // The key a Seek (or SeekForPrev) to `target` lands on, and the one a
  // step on from there (Next after Seek, Prev after SeekForPrev) lands on;
  // "-" where it is not valid.
  std::pair<std::string, std::string> seek(const std::string& target,
                                           bool for_prev) {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions()));
    if (for_prev) {
      it->SeekForPrev(target);
    } else {
      it->Seek(target);
    }
    if (!it->Valid()) return {"-", "-"};
    std::string first = it->key().ToString();
    if (for_prev) {
      it->Prev();
    } else {
      it->Next();
    }
    return {first, it->Valid() ? it->key().ToString() : "-"};
  }

  rocksdb::DB& db() { return *db_; }

 private:
  void open() {
    db_ = testing::open_memtable_db(
        dir_, log::rocksdb_backend::make_channel_memtable_factory());
  }

  std::filesystem::path dir_;
  std::unique_ptr<rocksdb::DB> db_;
};

// What a Seek (or SeekForPrev) to `target` and one step on must give, by
// the model's order.
std::pair<std::string, std::string> expected_seek(
    const std::set<std::string>& model, const std::string& target,
    bool for_prev) {
  if (!for_prev) {
    auto at = model.lower_bound(target);
    if (at == model.end()) return {"-", "-"};
    auto next = std::next(at);
    return {*at, next == model.end() ? "-" : *next};
  }
  auto past = model.upper_bound(target);
  if (past == model.begin()) return {"-", "-"};
  auto at = std::prev(past);
  return {*at, at == model.begin() ? "-" : *std::prev(at)};
}

// Channel ids of every shape the key layout allows: empty, one byte, the
// bytes 0x00 and 0xff, ids one another's prefixes, and the longest.
std::vector<std::string> odd_channels() {
  return {"",
          "a",
          "ab",
          "abc",
          std::string(1, '\0'),
          std::string("a\0b", 3),
          std::string(3, '\xff'),
          "18ed547cec324141b1288ce591393efc",
          "18ed547cec324141b1288ce591393efd",
          std::string(255, 'z')};
}

// Checks every read of `db` against `model`: the scans both ways, a point
// read of each key and of keys next to them, and seeks both ways to each
// channel's prefix, to its keys and between them.
void check_against(ChannelDb& db, const std::set<std::string>& model,
                   const std::vector<std::string>& channels) {
  const std::vector<std::string> forward(model.begin(), model.end());
  CHECK(db.keys() == forward);
  CHECK(db.keys(true) == std::vector(forward.rbegin(), forward.rend()));
  for (const std::string& key : model) CHECK(db.get(key) == "v:" + key);
  std::vector<std::string> targets = {"", std::string(1, '\xff'),
                                      std::string(300, '\xff')};
  for (const std::string& channel : channels) {
    const std::string prefix = layout::channel_prefix(channel);
    targets.push_back(prefix);
    targets.push_back(prefix.substr(0, prefix.size() - 1));
    targets.push_back(prefix + std::string(9, '\xff'));
    for (std::uint64_t sequence : {0, 1, 2, 3, 7, 8, 1000}) {
      targets.push_back(layout::channel_key(channel, sequence));
    }
  }
  for (const std::string& key : model) {
    targets.push_back(key);
    targets.push_back(key + '\0');
  }
  for (const std::string& target : targets) {
    if (!model.contains(target)) CHECK(db.get(target) == std::nullopt);
    for (bool for_prev : {false, true}) {
      CHECK(db.seek(target, for_prev) ==
            expected_seek(model, target, for_prev));
    }
  }
}

TEST_CASE("the channel memtable reads many channels' keys in key order") {
  testing::ScratchDir dir;
  ChannelDb db(dir.path());
  std::vector<std::string> channels = odd_channels();
  for (int i = 0; i < 40; ++i)
    channels.push_back("channel-" + std::to_string(i));
  std::set<std::string> model;
  // As the log's groups write them: one entry per channel a group wrote
  // to, each after that channel's last, channels in no particular order.
  std::mt19937 random(20261202);
  std::map<std::string, std::uint64_t> next_sequence;
  for (int group = 0; group < 60; ++group) {
    std::vector<std::string> wrote = channels;
    std::shuffle(wrote.begin(), wrote.end(), random);
    wrote.resize(1 + random() % wrote.size());
    for (const std::string& channel : wrote) {
      std::uint64_t& sequence = next_sequence[channel];
      sequence += 1 + random() % 3;
      const std::string key = layout::channel_key(channel, sequence);
      db.put(key, "v:" + key);
      model.insert(key);
    }
  }
  // Keys shorter than their length byte says: a partition of their own.
  for (const std::string& key :
       {std::string(1, '\x05'), std::string("\x05") + "ab",
        std::string("\x03"
                    "ab"),
        std::string()}) {
    db.put(key, "v:" + key);
    model.insert(key);
  }
  check_against(db, model, channels);

  db.reopen();  // the WAL replayed into a new memtable
  check_against(db, model, channels);

  db.flush();  // the memtable's iterator writes the table file
  check_against(db, model, channels);
}

TEST_CASE("the channel memtable reads keys out of order and deleted right") {
  testing::ScratchDir dir;
  ChannelDb db(dir.path());
  const std::vector<std::string> channels = {"a", "b", "c"};
  std::set<std::string> model;
  auto put = [&](const std::string& channel, std::uint64_t sequence,
                 const std::string& value) {
    const std::string key = layout::channel_key(channel, sequence);
    db.put(key, value);
    model.insert(key);
  };
  for (std::uint64_t sequence = 1; sequence <= 50; ++sequence) {
    for (const std::string& channel : channels) put(channel, sequence, "");
  }
  for (std::uint64_t sequence = 200; sequence > 50; --sequence) {
    put("b", sequence, "");  // backward
  }
  for (const std::string& key : model) db.put(key, "v:" + key);  // again
  const std::string gone = layout::channel_key("b", 70);
  db.remove(gone);  // a tombstone, newer than the key it hides
  model.erase(gone);
  check_against(db, model, channels);
  CHECK(db.get(gone) == std::nullopt);

  db.reopen();
  check_against(db, model, channels);
}

TEST_CASE(
    "readers of the channel memtable see each channel densely while "
    "it grows") {
  testing::ScratchDir dir;
  ChannelDb db(dir.path());
  constexpr int kChannels = 50;
  constexpr std::uint64_t kRounds = 1000;
  std::atomic<bool> done{false};
  std::atomic<int> gaps{0};
  std::atomic<std::uint64_t> reads{0};
  auto channel = [](int i) { return "ch-" + std::to_string(i); };
  // Per channel, the sequences a scan saw must be 1, 2, 3, ...; a channel
  // the writer has not reached yet is simply absent.
  auto reader = [&] {
    while (!done.load()) {
      std::map<std::string, std::uint64_t> last;
      for (const std::string& key : db.keys()) {
        const std::string prefix = key.substr(0, 1 + std::uint8_t(key[0]));
        const std::uint64_t sequence =
            layout::decode_be64(key.substr(prefix.size())).value_or(0);
        std::uint64_t& seen = last[prefix];
        if (sequence != seen + 1) ++gaps;
        seen = sequence;
      }
      // A point read finds the last key the scan found of each channel.
      for (const auto& [prefix, sequence] : last) {
        if (!db.get(prefix + layout::encode_be64(sequence))) ++gaps;
      }
      ++reads;
    }
  };
  std::thread first(reader);
  std::thread second(reader);
  std::vector<std::uint64_t> written(kChannels, 0);
  for (std::uint64_t round = 1; round <= kRounds; ++round) {
    // New channels keep appearing while the readers read.
    const auto active = std::min<std::size_t>(
        kChannels, 1 + static_cast<std::size_t>(round / 4));
    for (std::size_t i = 0; i < active; ++i) {
      db.put(layout::channel_key(channel(static_cast<int>(i)), ++written[i]),
             "v");
    }
  }
  done = true;
  first.join();
  second.join();
  CHECK(gaps.load() == 0);
  CHECK(reads.load() > 0);
}

}  // namespace
}  // namespace parley
