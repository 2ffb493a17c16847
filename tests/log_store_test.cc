// LogStore semantics, one body run against every backend. Built twice:
// log_store_test runs it on the memory, RocksDB and overlay backends;
// log_store_postgres_test (PARLEY_TEST_POSTGRES_BACKEND, label `postgres`)
// runs the same cases on a PostgreSQL server the test fixture started.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "log/memory_log_store.h"
#include "log/rocksdb_log_store.h"
#include "log/tail.h"
#include "schemas/record.h"
#include "tests/test_support.h"
#ifdef PARLEY_TEST_POSTGRES_BACKEND
#include "log/postgres_log_store.h"
#include "tests/postgres_test_support.h"
#endif

namespace parley {
namespace {

#ifdef PARLEY_TEST_POSTGRES_BACKEND
TEST_SUITE_BEGIN("postgres");  // the CTest label: needs the server fixture
#endif

using log::AppendEntry;
using log::ErrorCode;
using log::kLastSequence;
using testing::text_entry;
using testing::text_of;

struct MemoryBackend {
  std::unique_ptr<log::LogStore> store = log::make_memory_log_store();
};

// Durable backends also reopen their store and open it read-only.
struct RocksDbBackend {
  testing::ScratchDir dir;
  std::unique_ptr<log::LogStore> store = open();

  log::Result<std::unique_ptr<log::LogStore>> try_open() {
    auto opened = log::open_rocksdb_log_store(dir.path());
    if (!opened) return std::unexpected(opened.error());
    return std::move(opened->store);
  }
  std::unique_ptr<log::LogStore> open() {
    auto opened = try_open();
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    return std::move(*opened);
  }
  log::Result<std::unique_ptr<log::LogStore>> open_read_only() {
    return log::open_rocksdb_log_store_read_only(dir.path());
  }
};

#ifdef PARLEY_TEST_POSTGRES_BACKEND
// A database of its own per test on the fixture's server.
struct PostgresBackend {
  testing::ScratchDatabase database;
  std::unique_ptr<log::LogStore> store = open();

  log::Result<std::unique_ptr<log::LogStore>> try_open() {
    auto opened = log::open_postgres_log_store(database.uri());
    if (!opened) return std::unexpected(opened.error());
    return std::move(opened->store);
  }
  std::unique_ptr<log::LogStore> open() {
    auto opened = try_open();
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    return std::move(*opened);
  }
  log::Result<std::unique_ptr<log::LogStore>> open_read_only() {
    return log::open_postgres_log_store_read_only(database.uri());
  }
};
#endif

// An overlay on an empty RocksDB store: every record is the overlay's own.
// (An overlay on records of its base: the tests at the end.)
struct OverlayBackend {
  RocksDbBackend base;
  std::unique_ptr<log::LogStore> store =
      log::make_overlay_log_store(*base.store);
};

#ifdef PARLEY_TEST_POSTGRES_BACKEND
#define BACKENDS PostgresBackend
#define DURABLE_BACKENDS PostgresBackend
#else
#define BACKENDS MemoryBackend, RocksDbBackend, OverlayBackend
#define DURABLE_BACKENDS RocksDbBackend
#endif

std::vector<std::string> texts(const log::LogStore& store,
                               std::uint64_t from = 1,
                               std::uint64_t to = kLastSequence) {
  std::vector<std::string> seen;
  auto read = store.read(from, to, [&](std::uint64_t, std::string_view record) {
    seen.push_back(text_of(record));
    return true;
  });
  REQUIRE_MESSAGE(read.has_value(), testing::error_message(read));
  return seen;
}

std::vector<std::string> channel_texts(const log::LogStore& store,
                                       std::string_view channel,
                                       std::uint64_t from = 1,
                                       std::uint64_t to = kLastSequence) {
  std::vector<std::string> seen;
  auto read = store.read_channel(
      channel, from, to,
      [&](std::uint64_t, std::uint64_t, std::string_view record) {
        seen.push_back(text_of(record));
        return true;
      });
  REQUIRE_MESSAGE(read.has_value(), testing::error_message(read));
  return seen;
}

log::Result<std::vector<log::Position>> append(log::LogStore& store,
                                               std::vector<AppendEntry> batch) {
  return store.append(batch);
}

TEST_CASE_TEMPLATE("appended records read back in order with dense sequences",
                   Backend, BACKENDS) {
  Backend backend;
  log::LogStore& store = *backend.store;
  CHECK(store.last_sequence() == 0);
  auto first = append(store, {text_entry("", "a"), text_entry("", "b")});
  REQUIRE(first.has_value());
  auto second = append(store, {text_entry("", "c")});
  REQUIRE(second.has_value());
  CHECK((*first)[0].log_sequence == 1);
  CHECK((*first)[1].log_sequence == 2);
  CHECK((*second)[0].log_sequence == 3);
  CHECK(store.last_sequence() == 3);
  CHECK(texts(store) == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE_TEMPLATE(
    "append stamps the sequences into the caller's record bytes and entries",
    Backend, BACKENDS) {
  Backend backend;
  std::vector<AppendEntry> batch{text_entry("c1", "a"), text_entry("", "b")};
  REQUIRE(backend.store->append(batch).has_value());
  CHECK(batch[0].position.log_sequence == 1);
  CHECK(batch[0].position.channel_sequence == 1);
  CHECK(batch[1].position.log_sequence == 2);
  CHECK(batch[1].position.channel_sequence == 0);
  auto stamped = schema::verify_record(batch[0].record);
  REQUIRE(stamped.has_value());
  CHECK(stamped->log_sequence == 1);
  CHECK(stamped->channel_sequence == 1);
  CHECK(schema::verify_record(batch[1].record)->channel_sequence == 0);
  backend.store->read(1, 1, [&](std::uint64_t, std::string_view record) {
    CHECK(record == batch[0].record);
    return true;
  });
}

TEST_CASE_TEMPLATE("read bounds are inclusive and clamp to the log", Backend,
                   BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store, {text_entry("", "a"), text_entry("", "b"),
                                  text_entry("", "c"), text_entry("", "d")}));
  CHECK(texts(*backend.store, 2, 3) == std::vector<std::string>{"b", "c"});
  CHECK(texts(*backend.store, 0, 1) == std::vector<std::string>{"a"});
  CHECK(texts(*backend.store, 4, 99) == std::vector<std::string>{"d"});
  CHECK(texts(*backend.store, 5).empty());
  CHECK(texts(*backend.store, 3, 2).empty());
}

TEST_CASE_TEMPLATE("a visitor returning false stops the read", Backend,
                   BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store, {text_entry("c", "a"), text_entry("c", "b")}));
  int visits = 0;
  REQUIRE(backend.store->read(1, kLastSequence, [&](auto, auto) {
    ++visits;
    return false;
  }));
  CHECK(visits == 1);
}

TEST_CASE_TEMPLATE("a batch with an invalid record writes nothing", Backend,
                   BACKENDS) {
  Backend backend;
  std::vector<AppendEntry> batch{
      text_entry("c1", "fine"),
      {.record = "not a flatbuffer", .channel = "c1"}};
  auto appended = backend.store->append(batch);
  REQUIRE_FALSE(appended.has_value());
  CHECK(appended.error().code == ErrorCode::kInvalidArgument);
  CHECK(appended.error().message.find("batch entry 1") != std::string::npos);
  CHECK(backend.store->last_sequence() == 0);
  CHECK(texts(*backend.store).empty());
  CHECK(channel_texts(*backend.store, "c1").empty());
  REQUIRE(append(*backend.store, {text_entry("c1", "next")}));
  CHECK(backend.store->last_sequence() == 1);
  CHECK(*backend.store->last_channel_sequence("c1") == 1);
}

TEST_CASE_TEMPLATE("a batch reusing an idempotency key writes nothing", Backend,
                   BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store, {text_entry("c1", "first", "k1")}));
  auto again = append(*backend.store, {text_entry("c1", "other", "k2"),
                                       text_entry("c1", "dup", "k1")});
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == ErrorCode::kConflict);
  CHECK(backend.store->last_sequence() == 1);
  CHECK(*backend.store->find_idempotency_key("k2") == std::nullopt);
  CHECK(channel_texts(*backend.store, "c1") ==
        std::vector<std::string>{"first"});
}

TEST_CASE_TEMPLATE("the same idempotency key twice in one batch is a conflict",
                   Backend, BACKENDS) {
  Backend backend;
  auto appended = append(
      *backend.store, {text_entry("c1", "a", "k"), text_entry("c1", "b", "k")});
  REQUIRE_FALSE(appended.has_value());
  CHECK(appended.error().code == ErrorCode::kConflict);
  CHECK(backend.store->last_sequence() == 0);
}

TEST_CASE_TEMPLATE("idempotency lookup finds the log sequence of the key",
                   Backend, BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store,
                 {text_entry("c1", "a"), text_entry("c1", "b", "key-b")}));
  CHECK(*backend.store->find_idempotency_key("key-b") == 2);
  CHECK(*backend.store->find_idempotency_key("key-x") == std::nullopt);
}

TEST_CASE_TEMPLATE("the channel index numbers each channel densely", Backend,
                   BACKENDS) {
  Backend backend;
  log::LogStore& store = *backend.store;
  auto appended = append(
      store, {text_entry("c1", "1a"), text_entry("c2", "2a"),
              text_entry("", "none"), text_entry("c1", "1b"),
              text_entry("c1x", "prefix-neighbour"), text_entry("c1", "1c")});
  REQUIRE(appended.has_value());
  std::vector<std::uint64_t> channel_sequences;
  for (const auto& position : *appended) {
    channel_sequences.push_back(position.channel_sequence);
  }
  CHECK(channel_sequences == std::vector<std::uint64_t>{1, 1, 0, 2, 1, 3});
  CHECK(channel_texts(store, "c1") ==
        std::vector<std::string>{"1a", "1b", "1c"});
  CHECK(channel_texts(store, "c1", 2, 2) == std::vector<std::string>{"1b"});
  CHECK(channel_texts(store, "c2") == std::vector<std::string>{"2a"});
  CHECK(channel_texts(store, "nope").empty());
  CHECK(*store.last_channel_sequence("c1") == 3);
  CHECK(*store.last_channel_sequence("nope") == 0);

  std::vector<std::uint64_t> log_sequences;
  store.read_channel("c1", 1, kLastSequence,
                     [&](std::uint64_t, std::uint64_t log_sequence, auto) {
                       log_sequences.push_back(log_sequence);
                       return true;
                     });
  CHECK(log_sequences == std::vector<std::uint64_t>{1, 4, 6});
}

TEST_CASE_TEMPLATE("scan_log visits every stored record with its key", Backend,
                   BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store, {text_entry("c1", "a"), text_entry("", "b"),
                                  text_entry("c2", "c")}));
  std::vector<std::pair<std::uint64_t, std::string>> seen;
  auto scanned = backend.store->scan_log(
      [&](std::uint64_t sequence, std::string_view record) {
        seen.emplace_back(sequence, text_of(record));
        return true;
      });
  REQUIRE_MESSAGE(scanned.has_value(), testing::error_message(scanned));
  CHECK(seen == std::vector<std::pair<std::uint64_t, std::string>>{
                    {1, "a"}, {2, "b"}, {3, "c"}});
}

TEST_CASE_TEMPLATE(
    "scan_channel_index lists every entry by id length then id then sequence",
    Backend, BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store, {text_entry("c2", "x"), text_entry("c1", "y"),
                                  text_entry("", "z"), text_entry("c10", "w"),
                                  text_entry("c1", "v")}));
  std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> seen;
  auto scanned = backend.store->scan_channel_index(
      [&](std::string_view channel, std::uint64_t channel_sequence,
          std::uint64_t log_sequence) {
        seen.emplace_back(std::string(channel), channel_sequence, log_sequence);
        return true;
      });
  REQUIRE_MESSAGE(scanned.has_value(), testing::error_message(scanned));
  CHECK(seen ==
        std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>>{
            {"c1", 1, 2}, {"c1", 2, 5}, {"c2", 1, 1}, {"c10", 1, 4}});
}

TEST_CASE_TEMPLATE("scan_idempotency_index lists every key in byte order",
                   Backend, BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store,
                 {text_entry("c1", "a", "key-b"), text_entry("c1", "b"),
                  text_entry("c2", "c", "key-a")}));
  std::vector<std::pair<std::string, std::uint64_t>> seen;
  auto scanned = backend.store->scan_idempotency_index(
      [&](std::string_view key, std::uint64_t sequence) {
        seen.emplace_back(std::string(key), sequence);
        return true;
      });
  REQUIRE_MESSAGE(scanned.has_value(), testing::error_message(scanned));
  CHECK(seen == std::vector<std::pair<std::string, std::uint64_t>>{
                    {"key-a", 3}, {"key-b", 1}});
}

TEST_CASE_TEMPLATE("a channel id over 255 bytes is refused", Backend,
                   BACKENDS) {
  Backend backend;
  auto appended =
      append(*backend.store, {text_entry(std::string(256, 'c'), "a")});
  REQUIRE_FALSE(appended.has_value());
  CHECK(appended.error().code == ErrorCode::kInvalidArgument);
  CHECK(append(*backend.store, {text_entry(std::string(255, 'c'), "a")}));
}

TEST_CASE_TEMPLATE("concurrent appenders get distinct dense sequences", Backend,
                   BACKENDS) {
  Backend backend;
  constexpr int kThreads = 8;
  constexpr int kAppends = 200;
  std::mutex mutex;
  std::set<std::uint64_t> sequences;
  std::set<std::uint64_t> channel_sequences;
  std::atomic<int> failures = 0;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kAppends; ++i) {
          auto appended =
              append(*backend.store, {text_entry("shared", std::to_string(t))});
          if (!appended) {
            ++failures;
            continue;
          }
          std::lock_guard lock(mutex);
          sequences.insert((*appended)[0].log_sequence);
          channel_sequences.insert((*appended)[0].channel_sequence);
        }
      });
    }
  }
  CHECK(failures == 0);
  REQUIRE(sequences.size() == kThreads * kAppends);
  CHECK(*sequences.begin() == 1);
  CHECK(*sequences.rbegin() == kThreads * kAppends);
  CHECK(channel_sequences.size() == kThreads * kAppends);
  CHECK(*channel_sequences.rbegin() == kThreads * kAppends);
  CHECK(backend.store->last_sequence() == kThreads * kAppends);
  CHECK(channel_texts(*backend.store, "shared").size() == kThreads * kAppends);
}

TEST_CASE_TEMPLATE("tail delivers old then new records in order and once each",
                   Backend, BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store, {text_entry("", "0"), text_entry("", "1")}));
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::pair<std::uint64_t, std::string>> seen;
  log::Tail tail(
      *backend.store, 2,
      [&](std::uint64_t sequence, std::string_view record) {
        std::lock_guard lock(mutex);
        seen.emplace_back(sequence, text_of(record));
        cv.notify_all();
        return true;
      },
      [](const log::Error& error) { FAIL(error.message); });
  tail.start();
  for (int i = 2; i < 50; ++i) {
    REQUIRE(append(*backend.store, {text_entry("", std::to_string(i))}));
  }
  {
    std::unique_lock lock(mutex);
    REQUIRE(cv.wait_for(lock, std::chrono::seconds(10),
                        [&] { return seen.size() >= 49; }));
  }
  tail.stop();
  REQUIRE(seen.size() == 49);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHECK(seen[i].first == i + 2);
    CHECK(seen[i].second == std::to_string(i + 1));
  }
}

TEST_CASE_TEMPLATE("wait_for_append returns when a record arrives", Backend,
                   BACKENDS) {
  Backend backend;
  std::jthread appender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    (void)append(*backend.store, {text_entry("", "late")});
  });
  CHECK(backend.store->wait_for_append(0, std::chrono::seconds(10)) == 1);
  CHECK(backend.store->wait_for_append(1, std::chrono::milliseconds(1)) == 1);
}

// What append_deferred() callbacks were told, in the order told.
struct Told {
  std::mutex mutex;
  std::vector<std::pair<int, log::Result<void>>> outcomes;

  log::LogStore::DurableCallback callback(int id) {
    return [this, id](log::Result<void> outcome) {
      std::lock_guard lock(mutex);
      outcomes.emplace_back(id, std::move(outcome));
    };
  }
  std::vector<int> ids() {
    std::lock_guard lock(mutex);
    std::vector<int> out;
    for (const auto& [id, outcome] : outcomes) out.push_back(id);
    return out;
  }
  bool all_ok() {
    std::lock_guard lock(mutex);
    return std::ranges::all_of(
        outcomes, [](const auto& told) { return told.second.has_value(); });
  }
};

TEST_CASE_TEMPLATE(
    "deferred batches are sequenced at once and told durable in order by "
    "flush",
    Backend, BACKENDS) {
  Backend backend;
  Told told;
  std::vector<std::vector<AppendEntry>> batches;
  for (int i = 0; i < 3; ++i) {
    batches.push_back({text_entry("c", std::to_string(i))});
  }
  for (int i = 0; i < 3; ++i) {
    auto sequenced =
        backend.store->append_deferred(batches[i], told.callback(i));
    REQUIRE_MESSAGE(sequenced.has_value(), testing::error_message(sequenced));
    const log::Position& position = batches[i][0].position;
    CHECK(position.log_sequence == static_cast<std::uint64_t>(i + 1));
    CHECK(position.channel_sequence == static_cast<std::uint64_t>(i + 1));
  }
  REQUIRE(backend.store->flush());
  CHECK(told.ids() == std::vector<int>{0, 1, 2});
  CHECK(told.all_ok());
  CHECK(backend.store->last_sequence() == 3);
  CHECK(texts(*backend.store) == std::vector<std::string>{"0", "1", "2"});
  REQUIRE(backend.store->flush());  // nothing left: returns at once
  CHECK(told.ids().size() == 3);
}

TEST_CASE_TEMPLATE("an append writes the deferred batches sequenced before it",
                   Backend, BACKENDS) {
  Backend backend;
  Told told;
  std::vector<AppendEntry> deferred{text_entry("c", "deferred")};
  REQUIRE(backend.store->append_deferred(deferred, told.callback(1)));
  REQUIRE(append(*backend.store, {text_entry("c", "waited")}));
  CHECK(told.ids() == std::vector<int>{1});
  CHECK(told.all_ok());
  CHECK(texts(*backend.store) ==
        std::vector<std::string>{"deferred", "waited"});
}

TEST_CASE_TEMPLATE(
    "a deferred batch refused before sequencing is returned and never told",
    Backend, BACKENDS) {
  Backend backend;
  Told told;
  std::vector<AppendEntry> too_long{text_entry(std::string(256, 'c'), "a")};
  auto refused = backend.store->append_deferred(too_long, told.callback(1));
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kInvalidArgument);
  REQUIRE(backend.store->flush());
  CHECK(told.ids().empty());
  CHECK(backend.store->last_sequence() == 0);
}

TEST_CASE_TEMPLATE(
    "concurrent deferred appenders and flushers: dense and each told once",
    Backend, BACKENDS) {
  Backend backend;
  constexpr int kThreads = 8;
  constexpr int kAppends = 100;
  Told told;
  std::vector<std::vector<AppendEntry>> batches(kThreads * kAppends);
  std::atomic<int> refusals = 0;
  std::atomic<int> failed_flushes = 0;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kAppends; ++i) {
          const int id = t * kAppends + i;
          batches[id] = {text_entry("shared", std::to_string(id))};
          if (!backend.store->append_deferred(batches[id], told.callback(id))) {
            ++refusals;
          }
          if (i % 10 == 9 && !backend.store->flush()) ++failed_flushes;
        }
        if (!backend.store->flush()) ++failed_flushes;
      });
    }
  }
  CHECK(refusals == 0);
  CHECK(failed_flushes == 0);
  std::vector<int> ids = told.ids();
  std::ranges::sort(ids);
  CHECK(std::ranges::adjacent_find(ids) == ids.end());
  CHECK(ids.size() == kThreads * kAppends);
  CHECK(told.all_ok());
  CHECK(backend.store->last_sequence() == kThreads * kAppends);
  CHECK(channel_texts(*backend.store, "shared").size() == kThreads * kAppends);
}

TEST_CASE_TEMPLATE("calls after close fail with closed", Backend, BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store, {text_entry("", "a")}));
  REQUIRE(backend.store->close());
  REQUIRE(backend.store->close());
  auto appended = append(*backend.store, {text_entry("", "b")});
  REQUIRE_FALSE(appended.has_value());
  CHECK(appended.error().code == ErrorCode::kClosed);
  auto read = backend.store->read(1, 1, [](auto, auto) { return true; });
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().code == ErrorCode::kClosed);
}

// A read under way when close() is called either finishes whole or ends
// with kClosed; close() never pulls the database from under it (the
// RocksDB store once closed its database while a read iterated it).
TEST_CASE_TEMPLATE("close lets a read under way end whole or closed", Backend,
                   BACKENDS) {
  Backend backend;
  constexpr int kRecords = 200;
  for (int i = 0; i < kRecords; ++i) {
    REQUIRE(append(*backend.store, {text_entry("c", "r")}));
  }
  std::atomic<bool> reading = false;
  std::atomic<bool> closing = false;
  int visited = 0;
  log::Result<void> read;
  std::thread reader([&] {
    read = backend.store->scan_log([&](std::uint64_t, std::string_view) {
      if (!reading.exchange(true)) {
        while (!closing) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ++visited;
      return true;
    });
  });
  while (!reading) std::this_thread::yield();
  closing = true;
  auto closed = backend.store->close();
  reader.join();
  CHECK_MESSAGE(closed.has_value(), testing::error_message(closed));
  if (read) {
    CHECK(visited == kRecords);
  } else {
    CHECK(read.error().code == ErrorCode::kClosed);
  }
}

TEST_CASE_TEMPLATE("a reopened store keeps every acked record and goes on",
                   Backend, DURABLE_BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store, {text_entry("c1", "a", "k1"),
                                  text_entry("", "b"), text_entry("c1", "c")}));
  REQUIRE(backend.store->close());
  backend.store = backend.open();
  log::LogStore& store = *backend.store;
  CHECK(store.last_sequence() == 3);
  CHECK(*store.last_channel_sequence("c1") == 2);
  CHECK(*store.find_idempotency_key("k1") == 1);
  auto reused = append(store, {text_entry("c1", "again", "k1")});
  REQUIRE_FALSE(reused.has_value());
  CHECK(reused.error().code == ErrorCode::kConflict);
  auto next = append(store, {text_entry("c1", "d")});
  REQUIRE_MESSAGE(next.has_value(), testing::error_message(next));
  CHECK(next->front().log_sequence == 4);
  CHECK(next->front().channel_sequence == 3);
  CHECK(texts(store) == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(channel_texts(store, "c1") == std::vector<std::string>{"a", "c", "d"});
}

TEST_CASE_TEMPLATE(
    "a durable store counts its group commits: records per group, time "
    "written, refusals not counted",
    Backend, DURABLE_BACKENDS) {
  Backend backend;
  log::LogStore& store = *backend.store;
  CHECK(store.commit_stats().groups == 0);
  REQUIRE(append(store, {text_entry("c1", "a"), text_entry("", "b"),
                         text_entry("c1", "c")}));
  REQUIRE(append(store, {text_entry("", "d")}));
  AppendEntry invalid = text_entry("", "e");
  invalid.record = "not a record";
  REQUIRE_FALSE(append(store, {invalid}).has_value());

  const log::CommitStatsSnapshot stats = store.commit_stats();
  CHECK(stats.groups == 2);
  CHECK(stats.records == 4);
  // Buckets le 1, 2, 4, ...: the 1-record group, then the 3-record one.
  CHECK(stats.records_buckets[0] == 1);
  CHECK(stats.records_buckets[1] == 1);
  CHECK(stats.records_buckets[2] == 2);
  CHECK(stats.records_buckets.back() == 2);
  CHECK(stats.seconds > 0);
  CHECK(stats.seconds_buckets.back() == 2);
}

TEST_CASE_TEMPLATE("a second writer is refused while the first holds the store",
                   Backend, DURABLE_BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store, {text_entry("", "a")}));
  auto second = backend.try_open();
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().code == ErrorCode::kBusy);
  REQUIRE(backend.store->close());
  auto after_close = backend.try_open();
  REQUIRE_MESSAGE(after_close.has_value(), testing::error_message(after_close));
  CHECK((*after_close)->last_sequence() == 1);
}

TEST_CASE_TEMPLATE("a read-only view refuses appends and follows the writer",
                   Backend, DURABLE_BACKENDS) {
  Backend backend;
  REQUIRE(append(*backend.store, {text_entry("c1", "a")}));
  auto view = backend.open_read_only();
  REQUIRE_MESSAGE(view.has_value(), testing::error_message(view));
  log::LogStore& reader = **view;
  CHECK(reader.last_sequence() == 1);
  auto refused = append(reader, {text_entry("c1", "nope")});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kReadOnly);
  REQUIRE(append(*backend.store, {text_entry("c1", "b")}));
  CHECK(reader.wait_for_append(1, std::chrono::seconds(10)) == 2);
  CHECK(texts(reader) == std::vector<std::string>{"a", "b"});
  CHECK(channel_texts(reader, "c1") == std::vector<std::string>{"a", "b"});
  CHECK(backend.store->last_sequence() == 2);
}

#ifndef PARLEY_TEST_POSTGRES_BACKEND
TEST_CASE("an overlay reads its base, appends after it, and leaves it as is") {
  RocksDbBackend base;
  REQUIRE(append(*base.store, {text_entry("c1", "a", "k1"),
                               text_entry("c2", "b"), text_entry("c1", "c")}));
  auto overlay = log::make_overlay_log_store(*base.store);
  CHECK(overlay->last_sequence() == 3);
  CHECK(overlay->last_channel_sequence("c1") == 2);
  auto appended = append(*overlay, {text_entry("c1", "d", "k2")});
  REQUIRE_MESSAGE(appended.has_value(), testing::error_message(appended));
  CHECK(appended->front().log_sequence == 4);
  CHECK(appended->front().channel_sequence == 3);
  auto reused = append(*overlay, {text_entry("c2", "e", "k1")});
  REQUIRE_FALSE(reused.has_value());
  CHECK(reused.error().code == ErrorCode::kConflict);
  CHECK(texts(*overlay) == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(texts(*overlay, 3, 4) == std::vector<std::string>{"c", "d"});
  CHECK(channel_texts(*overlay, "c1") ==
        std::vector<std::string>{"a", "c", "d"});
  CHECK(channel_texts(*overlay, "c1", 2, 3) ==
        std::vector<std::string>{"c", "d"});
  CHECK(overlay->find_idempotency_key("k1").value() == 1);
  CHECK(overlay->find_idempotency_key("k2").value() == 4);
  std::vector<std::uint64_t> scanned;
  REQUIRE(overlay->scan_log([&](std::uint64_t sequence, std::string_view) {
    scanned.push_back(sequence);
    return true;
  }));
  CHECK(scanned == std::vector<std::uint64_t>{1, 2, 3, 4});
  REQUIRE(overlay->close());
  auto after_close = overlay->read(1, 1, [](auto, auto) { return true; });
  REQUIRE_FALSE(after_close.has_value());
  CHECK(after_close.error().code == ErrorCode::kClosed);
  CHECK(base.store->last_sequence() == 3);
  CHECK(texts(*base.store) == std::vector<std::string>{"a", "b", "c"});
  CHECK_FALSE(base.store->find_idempotency_key("k2").value().has_value());
}

TEST_CASE("an overlay's reads stop where the visitor stops, in the base too") {
  RocksDbBackend base;
  REQUIRE(append(*base.store, {text_entry("c1", "a"), text_entry("c1", "b")}));
  auto overlay = log::make_overlay_log_store(*base.store);
  REQUIRE(append(*overlay, {text_entry("c1", "c")}));
  int visits = 0;
  REQUIRE(overlay->read(1, kLastSequence, [&](auto, auto) {
    ++visits;
    return false;
  }));
  CHECK(visits == 1);
  visits = 0;
  REQUIRE(overlay->read_channel(
      "c1", 1, kLastSequence, [&](auto, auto, auto) { return ++visits < 2; }));
  CHECK(visits == 2);
}

#endif  // PARLEY_TEST_POSTGRES_BACKEND

#ifdef PARLEY_TEST_POSTGRES_BACKEND
TEST_SUITE_END();
#endif

}  // namespace
}  // namespace parley
