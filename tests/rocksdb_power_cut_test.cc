// The RocksDB backend with async durability across simulated power cuts
// (the crash campaign's PowerCutFileSystem, tests/crashtest/power_cut_fs.h):
// whatever a cut keeps of the bytes nobody synced, the store opens to a
// prefix of its log (dense sequences 1..N, each record as appended) or
// refuses to open; it never opens with a hole. Damage is done by the
// power-cut file system and by real byte surgery on the WAL files RocksDB
// wrote.
#include <doctest/doctest.h>
#include <rocksdb/env.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "log/rocksdb_log_store.h"
#include "tests/crashtest/power_cut_fs.h"
#include "tests/rocksdb_raw_store.h"
#include "tests/test_support.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
using crashtest::PowerCutFileSystem;
using log::ErrorCode;
using log::kLastSequence;
using testing::text_entry;
using testing::text_of;

// Enough records to fill 64 KiB memtables, and so switch WALs, many times.
constexpr int kRecords = 4000;

// The store's files of one kind (".log": RocksDB WALs, ".sst": tables),
// oldest first.
std::vector<fs::path> files_of(const fs::path& dir, std::string_view kind) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == kind) found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// A store with async durability on a PowerCutFileSystem, with small
// memtables so that appends switch WALs often.
struct PoweredStore {
  testing::ScratchDir dir;
  std::shared_ptr<PowerCutFileSystem> file_system =
      std::make_shared<PowerCutFileSystem>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(file_system);
  std::unique_ptr<log::LogStore> store;

  PoweredStore() {
    auto opened = log::open_rocksdb_log_store(
        dir.path(), {.durability = log::Durability::kAsync,
                     .env = env.get(),
                     .write_buffer_size = 64 << 10});
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    store = std::move(opened->store);
  }

  // Appends records "1", "2", … (spread over eight channels, each with an
  // idempotency key, so that every column family takes writes) until an
  // append fails because the power is off, or `last` is acked. Returns how
  // many were acked.
  int append_until_cut(int last) {
    for (int i = 1; i <= last; ++i) {
      std::vector<log::AppendEntry> batch{
          text_entry("channel-" + std::to_string(i % 8), std::to_string(i),
                     "key-" + std::to_string(i))};
      if (!store->append(batch)) {
        REQUIRE(file_system->down());
        return i - 1;
      }
    }
    return last;
  }

  // Cuts the power (if nothing did yet), closes the store, and applies the
  // cut as `kept` chooses, keeping every directory change (as a file
  // system may, fsync or not).
  void power_cut(const PowerCutFileSystem::KeptBytes& kept) {
    file_system->cut();
    (void)store->close();  // fails: the power is off
    store.reset();
    (void)file_system->restore_power(
        kept, [](const std::string&, std::size_t count) { return count; });
  }
};

// The texts of the store's records, after checking that their sequences
// are 1..N with no gap.
std::vector<std::string> dense_texts(const log::LogStore& store) {
  std::vector<std::string> texts;
  std::uint64_t expected = 1;
  auto read = store.read(1, kLastSequence, [&](auto sequence, auto record) {
    CHECK_MESSAGE(sequence == expected, "log sequence "
                                            << expected << " is missing, "
                                            << sequence << " follows");
    expected = sequence + 1;
    texts.push_back(text_of(record));
    return true;
  });
  REQUIRE_MESSAGE(read.has_value(), testing::error_message(read));
  return texts;
}

std::vector<std::string> numbers(int first, int last) {
  std::vector<std::string> out;
  for (int i = first; i <= last; ++i) out.push_back(std::to_string(i));
  return out;
}

// Where each logical record of the RocksDB WAL `wal` ends. The WAL is a
// sequence of 32 KiB blocks of physical records, each a 7-byte header
// (crc32c: 4, payload length: 2, little-endian, type: 1) and its payload; a
// block's last < 7 bytes are zero padding. A logical record (one write
// batch) is one kFullType (1) record, or kFirstType (2), kMiddleType (3)…
// and kLastType (4).
std::vector<std::uint64_t> record_ends(const fs::path& wal) {
  std::ifstream in(wal, std::ios::binary);
  const std::string bytes(std::istreambuf_iterator<char>(in), {});
  constexpr std::uint64_t kBlock = 32768;
  constexpr std::uint64_t kHeader = 7;
  std::vector<std::uint64_t> ends;
  std::uint64_t offset = 0;
  while (offset + kHeader <= bytes.size()) {
    const std::uint64_t left_in_block = kBlock - offset % kBlock;
    if (left_in_block < kHeader) {
      offset += left_in_block;
      continue;
    }
    const auto byte = [&](std::uint64_t at) {
      return static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[at]));
    };
    const std::uint64_t length = byte(offset + 4) | byte(offset + 5) << 8;
    const std::uint64_t type = byte(offset + 6);
    offset += kHeader + length;
    if (type == 1 || type == 4) ends.push_back(offset);
  }
  return ends;
}

TEST_CASE(
    "an async power cut that keeps a newer WAL and not an older WAL's tail "
    "leaves a prefix of the log, not a hole") {
  // The older WALs lose every unsynced byte (a cut at a record boundary),
  // or keep half of them (a record torn mid-way); the newest WAL keeps all
  // of its bytes, and every new directory entry survives: outcomes a disk
  // may produce, since nothing orders unsynced writes to different files.
  for (const bool torn : {false, true}) {
    CAPTURE(torn);
    PoweredStore powered;
    // Cut at the first moment a newer WAL holds records while an older
    // WAL's are not all synced, if one ever comes.
    powered.file_system->cut_when_newer_wal_written(/*older_unsynced=*/true);
    const int acked = powered.append_until_cut(kRecords);
    const bool cut_early = powered.file_system->down();
    const std::vector<fs::path> wals = files_of(powered.dir.path(), ".log");
    REQUIRE_FALSE(wals.empty());
    const std::string newest = wals.back().string();
    if (!cut_early) {
      // Memtables were flushed, so WALs were switched, while appending.
      CHECK_FALSE(files_of(powered.dir.path(), ".sst").empty());
    }
    powered.power_cut(
        [&](const std::string& name, std::uint64_t synced, std::uint64_t size) {
          if (name == newest) return size;
          return torn ? synced + (size - synced) / 2 : synced;
        });

    auto reopened = log::open_rocksdb_log_store(powered.dir.path());
    REQUIRE_MESSAGE(reopened.has_value(), testing::error_message(reopened));
    const std::vector<std::string> texts = dense_texts(*reopened->store);
    MESSAGE(acked << " acked, " << texts.size() << " after the cut"
                  << std::string(cut_early ? ", cut as a newer WAL overtook "
                                             "an older one"
                                           : ", cut at the end"));
    CHECK(texts == numbers(1, static_cast<int>(texts.size())));
    CHECK(reopened->store->last_sequence() == texts.size());
  }
}

TEST_CASE(
    "an older WAL cut short before a newer WAL's records is refused, not "
    "opened with a hole") {
  PoweredStore powered;
  // Stop everything as soon as a second WAL holds a record, then keep
  // every byte written (as a crash of the process would): both WALs must
  // be replayed.
  powered.file_system->cut_when_newer_wal_written(/*older_unsynced=*/false);
  powered.append_until_cut(kRecords);
  REQUIRE(powered.file_system->down());
  powered.power_cut([](const std::string&, std::uint64_t, std::uint64_t size) {
    return size;
  });
  const std::vector<fs::path> wals = files_of(powered.dir.path(), ".log");
  REQUIRE(wals.size() >= 2);
  // Cut the older WAL's last write batch away, exactly at a record
  // boundary, as a lost unsynced tail would.
  const fs::path& older = wals[wals.size() - 2];
  const std::vector<std::uint64_t> ends = record_ends(older);
  REQUIRE(ends.size() >= 2);
  REQUIRE(ends.back() == fs::file_size(older));
  fs::resize_file(older, ends[ends.size() - 2]);

  auto reopened = log::open_rocksdb_log_store(powered.dir.path());
  if (reopened) {
    (void)dense_texts(*reopened->store);  // names the hole
    FAIL("the store opened without the records the older WAL lost");
  }
  CHECK(reopened.error().code == ErrorCode::kCorruption);
  MESSAGE("refused with: " << reopened.error().message);
  CHECK(reopened.error().message.find("skip log sequence") !=
        std::string::npos);
  // Refusing changed nothing: the same damage is found again.
  auto again = log::open_rocksdb_log_store(powered.dir.path());
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == ErrorCode::kCorruption);
}

// A store in a new directory holding records "1".."200", closed cleanly.
// The records stay in its WAL at the close, so the next open replays them,
// flushes them to a table file and moves to a new MANIFEST, all before it
// removes the clean-close mark. (A background flush or compaction may also
// append to the MANIFEST then; a cut there tears that append, which
// rocksdb_recovery_test makes by byte surgery.)
constexpr int kClosedRecords = 200;
std::unique_ptr<testing::ScratchDir> closed_store() {
  auto closed = std::make_unique<testing::ScratchDir>();
  auto opened = log::open_rocksdb_log_store(closed->path());
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  for (int i = 1; i <= kClosedRecords; ++i) {
    std::vector<log::AppendEntry> batch{
        text_entry("channel-" + std::to_string(i % 8), std::to_string(i),
                   "key-" + std::to_string(i))};
    REQUIRE(opened->store->append(batch).has_value());
  }
  REQUIRE(opened->store->close().has_value());
  REQUIRE(fs::exists(closed->path() / "PARLEY-CLEAN-CLOSE"));
  return closed;
}

// Opens a copy of the closed store in `closed` with the power cut after its
// 1st, 2nd, … append, until the open makes fewer; after each cut, losing
// every unsynced byte and directory change or keeping a torn half of the
// unsynced bytes and every directory change, the store must open with
// every record.
void check_power_cuts_in_open(const fs::path& closed) {
  for (const bool torn : {false, true}) {
    CAPTURE(torn);
    int cuts = 0;
    for (std::int64_t appends = 1;; ++appends) {
      CAPTURE(appends);
      testing::ScratchDir dir;
      fs::copy(closed, dir.path(), fs::copy_options::recursive);
      auto file_system = std::make_shared<PowerCutFileSystem>();
      std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(file_system);
      file_system->cut_after_appends(appends);
      {
        auto opened =
            log::open_rocksdb_log_store(dir.path(), {.env = env.get()});
        if (!file_system->down()) {
          // The open made fewer appends than that: every cut was tried.
          REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
          break;
        }
        if (opened) (void)opened->store->close();  // fails: the power is off
      }
      ++cuts;
      (void)file_system->restore_power(
          [&](const std::string&, std::uint64_t synced, std::uint64_t size) {
            return torn ? synced + (size - synced) / 2 : synced;
          },
          [&](const std::string&, std::size_t count) {
            return torn ? count : 0;
          });
      auto reopened = log::open_rocksdb_log_store(dir.path());
      REQUIRE_MESSAGE(reopened.has_value(), testing::error_message(reopened));
      CHECK(dense_texts(*reopened->store) == numbers(1, kClosedRecords));
    }
    MESSAGE(cuts << " cuts inside the open");
    CHECK(cuts > 0);
  }
}

TEST_CASE(
    "a power cut at any write of the open after a clean close leaves a store "
    "that opens with every record") {
  check_power_cuts_in_open(closed_store()->path());
}

TEST_CASE(
    "a power cut at any write of the open that upgrades a cleanly closed "
    "store's format leaves a store that opens with every record") {
  auto closed = closed_store();
  // As a build of format 3 left it: this build writes its own version, a
  // synced WAL append, which must come after the mark is gone.
  testing::RawStore(closed->path()).put(4, "format_version", "3");
  check_power_cuts_in_open(closed->path());
}

// A memtable seal syncs the whole WAL before the next append may go on
// (WalSealSync); with sync off, the kernel is asked to write the WAL back
// as it grows, so that sync finds little left. Synced appends need no hint.
TEST_CASE(
    "with sync off the WAL's writeback starts as it grows, and synced "
    "appends need no such hint") {
  for (const auto durability :
       {log::Durability::kAsync, log::Durability::kSync}) {
    CAPTURE(static_cast<int>(durability));
    testing::ScratchDir dir;
    auto file_system = std::make_shared<PowerCutFileSystem>();
    std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(file_system);
    auto opened = log::open_rocksdb_log_store(
        dir.path(), {.durability = durability, .env = env.get()});
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    // 4 MiB of records, one WAL (the memtables hold 64 MiB).
    const std::string text(4096, 'x');
    for (int i = 0; i < 1024; ++i) {
      std::vector<log::AppendEntry> batch{text_entry("channel", text)};
      REQUIRE(opened->store->append(batch).has_value());
    }
    if (durability == log::Durability::kAsync) {
      CHECK(file_system->wal_range_syncs() >= 2);
    } else {
      CHECK(file_system->wal_range_syncs() == 0);
    }
    REQUIRE(opened->store->close().has_value());
  }
}

}  // namespace
}  // namespace parley
