// The RocksDB backend opened read-only (a RocksDB secondary), beside a live
// writer that holds the store's lock.
#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "log/rocksdb_log_store.h"
#include "log/tail.h"
#include "tests/test_support.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using log::ErrorCode;
using log::kLastSequence;
using testing::text_entry;
using testing::text_of;

void append_texts(log::LogStore& store, int first, int last) {
  for (int i = first; i <= last; ++i) {
    std::vector<log::AppendEntry> batch{text_entry("c1", std::to_string(i))};
    auto appended = store.append(batch);
    REQUIRE_MESSAGE(appended.has_value(), testing::error_message(appended));
  }
}

std::vector<std::string> all_texts(const log::LogStore& store) {
  std::vector<std::string> seen;
  auto read = store.read(1, kLastSequence, [&](auto, std::string_view record) {
    seen.push_back(text_of(record));
    return true;
  });
  REQUIRE_MESSAGE(read.has_value(), testing::error_message(read));
  return seen;
}

// Points TMPDIR at a fresh directory of the test's own while it lives, so
// that what a read-only view might leave there is not confused with what
// tests running in parallel leave.
class PrivateTmpdir {
 public:
  PrivateTmpdir() {
    if (const char* tmpdir = std::getenv("TMPDIR")) previous_ = tmpdir;
    ::setenv("TMPDIR", dir_.path().c_str(), 1);
  }
  PrivateTmpdir(const PrivateTmpdir&) = delete;
  PrivateTmpdir& operator=(const PrivateTmpdir&) = delete;
  ~PrivateTmpdir() {
    if (previous_) {
      ::setenv("TMPDIR", previous_->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }

 private:
  testing::ScratchDir dir_;
  std::optional<std::string> previous_;
};

// The names of the entries in `directory`.
std::set<std::string> entries(const fs::path& directory) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(directory)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

TEST_CASE("a read-only store reads what a live writer holding the lock wrote") {
  testing::ScratchDir dir;
  auto writer = log::open_rocksdb_log_store(dir.path());
  REQUIRE(writer.has_value());
  append_texts(*writer->store, 1, 3);
  auto reader = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE_MESSAGE(reader.has_value(), testing::error_message(reader));
  CHECK((*reader)->last_sequence() == 3);
  CHECK(all_texts(**reader) == std::vector<std::string>{"1", "2", "3"});
  std::vector<std::uint64_t> channel;
  REQUIRE((*reader)
              ->read_channel("c1", 2, kLastSequence,
                             [&](std::uint64_t sequence, auto, auto) {
                               channel.push_back(sequence);
                               return true;
                             })
              .has_value());
  CHECK(channel == std::vector<std::uint64_t>{2, 3});
}

TEST_CASE("a read-only store catches up with appends when it waits for them") {
  testing::ScratchDir dir;
  auto writer = log::open_rocksdb_log_store(dir.path());
  REQUIRE(writer.has_value());
  append_texts(*writer->store, 1, 2);
  auto reader = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE(reader.has_value());
  append_texts(*writer->store, 3, 5);
  CHECK((*reader)->wait_for_append(2, std::chrono::seconds(10)) == 5);
  CHECK(all_texts(**reader) ==
        std::vector<std::string>{"1", "2", "3", "4", "5"});
}

TEST_CASE("a tail on a read-only store follows a writer appending meanwhile") {
  testing::ScratchDir dir;
  auto writer = log::open_rocksdb_log_store(dir.path());
  REQUIRE(writer.has_value());
  append_texts(*writer->store, 1, 1);
  auto reader = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE(reader.has_value());
  std::mutex mutex;
  std::condition_variable seen_all;
  std::vector<std::string> seen;
  log::Tail tail(
      **reader, 1,
      [&](std::uint64_t, std::string_view record) {
        std::lock_guard lock(mutex);
        seen.push_back(text_of(record));
        seen_all.notify_all();
        return true;
      },
      [](const log::Error& error) { FAIL(error.message); });
  tail.start();
  std::thread appender([&] { append_texts(*writer->store, 2, 20); });
  appender.join();
  std::unique_lock lock(mutex);
  CHECK(seen_all.wait_for(lock, std::chrono::seconds(10),
                          [&] { return seen.size() == 20; }));
  lock.unlock();
  tail.stop();
  CHECK(seen.front() == "1");
  CHECK(seen.back() == "20");
}

TEST_CASE(
    "a read-only open beside a writer that keeps reopening the store never "
    "fails") {
  testing::ScratchDir dir;
  {
    auto opened = log::open_rocksdb_log_store(dir.path());
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    append_texts(*opened->store, 1, 3);
    REQUIRE(opened->store->close().has_value());
  }
  // Each read-write open writes a new MANIFEST and deletes the old one.
  std::atomic<bool> stop = false;
  std::atomic<int> reopens = 0;
  std::thread writer([&] {
    for (int i = 4; !stop; ++i) {
      auto opened = log::open_rocksdb_log_store(dir.path());
      if (!opened) continue;
      std::vector<log::AppendEntry> batch{text_entry("c1", std::to_string(i))};
      (void)opened->store->append(batch);
      (void)opened->store->close();
      ++reopens;
    }
  });
  int opens = 0;
  int failures = 0;
  std::string first_failure;
  for (const auto deadline = std::chrono::steady_clock::now() + 3s;
       std::chrono::steady_clock::now() < deadline; ++opens) {
    auto view = log::open_rocksdb_log_store_read_only(dir.path());
    if (!view) {
      if (failures++ == 0) first_failure = view.error().message;
      continue;
    }
    (void)(*view)->close();
  }
  stop = true;
  writer.join();
  MESSAGE(opens << " read-only opens beside " << reopens.load()
                << " read-write reopens");
  CHECK(reopens.load() > 0);
  CHECK_MESSAGE(failures == 0, first_failure);
}

TEST_CASE("a read-only store refuses appends and writes nothing") {
  testing::ScratchDir dir;
  {
    auto writer = log::open_rocksdb_log_store(dir.path());
    REQUIRE(writer.has_value());
    append_texts(*writer->store, 1, 2);
  }
  auto reader = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE(reader.has_value());
  std::vector<log::AppendEntry> batch{text_entry("c1", "x")};
  auto refused = (*reader)->append(batch);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kReadOnly);
  CHECK(refused.error().message.find("read-only") != std::string::npos);
  REQUIRE((*reader)->close().has_value());
  auto writer = log::open_rocksdb_log_store(dir.path());
  REQUIRE(writer.has_value());
  CHECK(writer->store->last_sequence() == 2);
}

TEST_CASE(
    "opening a missing store read-only fails not-found, creates nothing") {
  testing::ScratchDir dir;
  PrivateTmpdir tmpdir;
  auto missing = log::open_rocksdb_log_store_read_only(dir.path() / "none");
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().code == ErrorCode::kNotFound);
  CHECK(missing.error().message.find("no Parley store") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path() / "none"));
  auto empty_dir = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE_FALSE(empty_dir.has_value());
  CHECK(empty_dir.error().code == ErrorCode::kNotFound);
  CHECK(entries(fs::temp_directory_path()).empty());
}

TEST_CASE("a RocksDB database that is not a Parley store is refused") {
  testing::ScratchDir dir;
  {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(options, dir.path().string(), &db).ok());
    std::unique_ptr<rocksdb::DB> owned(db);
    REQUIRE(db->Put(rocksdb::WriteOptions(), "someone", "else's").ok());
  }
  PrivateTmpdir tmpdir;
  auto refused = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kCorruption);
  CHECK(refused.error().message.find("not a Parley store") !=
        std::string::npos);
  CHECK(entries(fs::temp_directory_path()).empty());
}

TEST_CASE("a read-only store writes nothing, in the store or elsewhere") {
  testing::ScratchDir dir;
  PrivateTmpdir tmpdir;
  {
    auto writer = log::open_rocksdb_log_store(dir.path());
    REQUIRE(writer.has_value());
    append_texts(*writer->store, 1, 3);
  }
  const std::set<std::string> store_files = entries(dir.path());
  auto reader = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE(reader.has_value());
  CHECK(all_texts(**reader) == std::vector<std::string>{"1", "2", "3"});
  (void)(*reader)->wait_for_append(3, std::chrono::milliseconds(60));
  CHECK(entries(fs::temp_directory_path()).empty());
  CHECK(entries(dir.path()) == store_files);
  REQUIRE((*reader)->close().has_value());
  CHECK_FALSE((*reader)->read(1, 1, [](auto, auto) { return true; }));
}

}  // namespace
}  // namespace parley
