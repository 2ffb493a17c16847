// What only the PostgreSQL backend has: its schema version, a connection
// cut mid-transaction, and a hub on PostgreSQL doing what a hub on RocksDB
// does (the LogStore contract itself: log_store_postgres_test). Needs the
// `postgres` fixture's server.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

#include "log/postgres_log_store.h"
#include "tests/own_postgres_server.h"
#include "tests/postgres_test_support.h"
#include "tests/test_support.h"

namespace parley {
namespace {

using log::ErrorCode;
using testing::text_entry;

TEST_SUITE_BEGIN("postgres");

std::unique_ptr<log::LogStore> open_store(const std::string& uri) {
  auto opened = log::open_postgres_log_store(uri);
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  return std::move(opened->store);
}

TEST_CASE("a store of a newer schema version is refused and left as it is") {
  testing::ScratchDatabase database;
  {
    auto store = open_store(database.uri());
    std::vector<log::AppendEntry> batch{text_entry("c1", "a")};
    REQUIRE(store->append(batch));
  }
  REQUIRE(testing::run_sql(database.uri(),
                           "UPDATE parley_schema_version SET version = 3"));
  auto opened = log::open_postgres_log_store(database.uri());
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().code == ErrorCode::kVersionMismatch);
  CHECK(opened.error().message.find("schema version 3, newer than this build "
                                    "knows (2); upgrade parley") !=
        std::string::npos);
  auto viewed = log::open_postgres_log_store_read_only(database.uri());
  REQUIRE_FALSE(viewed.has_value());
  CHECK(viewed.error().code == ErrorCode::kVersionMismatch);
  CHECK(testing::run_sql(database.uri(),
                         "SELECT version FROM parley_schema_version") == "3");
  CHECK(testing::run_sql(database.uri(), "SELECT count(*) FROM parley_log") ==
        "1");
}

TEST_CASE(
    "a store of schema version 1 is read as it is and migrated by a writer") {
  testing::ScratchDatabase database;
  {
    auto store = open_store(database.uri());
    std::vector<log::AppendEntry> batch{text_entry("c1", "a", "k")};
    REQUIRE(store->append(batch));
  }
  // Version 1: the writer row had no lease.
  REQUIRE(testing::run_sql(database.uri(),
                           "ALTER TABLE parley_writer DROP COLUMN lease_until; "
                           "UPDATE parley_schema_version SET version = 1"));
  {
    auto viewed = log::open_postgres_log_store_read_only(database.uri());
    REQUIRE_MESSAGE(viewed.has_value(), testing::error_message(viewed));
    CHECK((*viewed)->last_sequence() == 1);
  }
  CHECK(testing::run_sql(database.uri(),
                         "SELECT version FROM parley_schema_version") == "1");
  auto store = open_store(database.uri());
  CHECK(testing::run_sql(database.uri(),
                         "SELECT version FROM parley_schema_version") == "2");
  CHECK(testing::run_sql(database.uri(),
                         "SELECT lease_until > clock_timestamp() FROM "
                         "parley_writer") == "t");
  CHECK(*store->find_idempotency_key("k") == 1);
  std::vector<log::AppendEntry> next{text_entry("c1", "b")};
  auto appended = store->append(next);
  REQUIRE_MESSAGE(appended.has_value(), testing::error_message(appended));
  CHECK(appended->front().log_sequence == 2);
}

TEST_CASE("a record damaged in the database is named by its checksum") {
  testing::ScratchDatabase database;
  std::string record;
  {
    auto store = open_store(database.uri());
    std::vector<log::AppendEntry> batch{text_entry("c1", "a", "key-a"),
                                        text_entry("c1", "b", "key-b")};
    REQUIRE(store->append(batch));
    REQUIRE(store->read(1, 1, [&](auto, std::string_view bytes) {
      record = bytes;
      return true;
    }));
  }
  // A digit of created_at, 2026 -> 2027: still a valid FlatBuffer.
  // (Opening checks the newest record, so the older one is damaged.)
  const std::size_t at = record.find("2026-01-01T");
  REQUIRE(at != std::string::npos);
  REQUIRE(testing::run_sql(database.uri(),
                           "UPDATE parley_log SET record = set_byte(record, " +
                               std::to_string(at + 3) +
                               ", 55) WHERE log_sequence = 1"));
  auto store = open_store(database.uri());
  auto read =
      store->read(1, log::kLastSequence, [](auto, auto) { return true; });
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().code == ErrorCode::kCorruption);
  CHECK_MESSAGE(read.error().message.starts_with(
                    "log sequence 1: checksum mismatch (stored 0x"),
                read.error().message);
}

TEST_CASE(
    "a database without a store: created by a writer and never by a reader") {
  testing::ScratchDatabase database;
  auto viewed = log::open_postgres_log_store_read_only(database.uri());
  REQUIRE_FALSE(viewed.has_value());
  CHECK(viewed.error().code == ErrorCode::kNotFound);
  auto refused = log::open_postgres_log_store(database.uri(),
                                              {.create_if_missing = false});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kNotFound);
  CHECK(testing::run_sql(database.uri(),
                         "SELECT count(*) FROM pg_tables WHERE tablename "
                         "LIKE 'parley%'") == "0");
  auto opened = log::open_postgres_log_store(database.uri());
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  CHECK(opened->created);
  CHECK(testing::run_sql(database.uri(),
                         "SELECT version FROM parley_schema_version") == "2");
}

TEST_CASE("a dropped store is gone and a live writer's store is not dropped") {
  testing::ScratchDatabase database;
  auto store = open_store(database.uri());
  std::vector<log::AppendEntry> batch{text_entry("c1", "a")};
  REQUIRE(store->append(batch));
  auto refused = log::drop_postgres_log_store(database.uri());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kBusy);
  REQUIRE(store->close());
  REQUIRE(log::drop_postgres_log_store(database.uri()));
  CHECK(testing::run_sql(database.uri(),
                         "SELECT count(*) FROM pg_tables WHERE tablename "
                         "LIKE 'parley%'") == "0");
  auto again = log::drop_postgres_log_store(database.uri());
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == ErrorCode::kNotFound);
  auto fresh = open_store(database.uri());
  CHECK(fresh->last_sequence() == 0);
}

TEST_CASE("no server at the address is a clear I/O error") {
  auto opened = log::open_postgres_log_store(
      "postgresql://parley:secret@127.0.0.1:1/none?connect_timeout=2");
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().code == ErrorCode::kIoError);
  CHECK(opened.error().message.starts_with("cannot connect to PostgreSQL"));
  CHECK(opened.error().message.find("secret") == std::string::npos);
}

// The writer's transaction is stopped after it inserted the records and
// channel entries (a SHARE lock on the idempotency table holds its last
// INSERT), and its backend is terminated there.
TEST_CASE(
    "a connection cut mid-transaction fails the append and writes none "
    "of it and the store reconnects at resume()") {
  testing::ScratchDatabase database;
  auto store = open_store(database.uri());
  std::vector<log::AppendEntry> first{text_entry("c1", "a", "k1")};
  REQUIRE(store->append(first));

  testing::SqlSession blocker(database.uri());
  REQUIRE(blocker.run("BEGIN"));
  REQUIRE(blocker.run("LOCK TABLE parley_idempotency IN SHARE MODE"));
  std::vector<log::AppendEntry> second{text_entry("c1", "b"),
                                       text_entry("c2", "c", "k2")};
  log::Result<std::vector<log::Position>> appended;
  std::jthread appender([&] { appended = store->append(second); });

  testing::SqlSession killer(database.uri());
  std::string waiting;
  for (int i = 0; i < 500 && waiting.empty(); ++i) {
    auto pid = killer.run(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock'");
    REQUIRE(pid);
    waiting = *pid;
    if (waiting.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  REQUIRE_MESSAGE(!waiting.empty(), "the writer never blocked on the lock");
  // Mid-transaction: its records are inserted, not committed.
  REQUIRE(killer.run("SELECT pg_terminate_backend(" + waiting + ")") == "t");
  appender.join();
  REQUIRE(blocker.run("ROLLBACK"));

  REQUIRE_FALSE(appended.has_value());
  CHECK(appended.error().code == ErrorCode::kUnavailable);
  INFO(appended.error().message);
  CHECK(appended.error().message.find("log sequences 2..3") !=
        std::string::npos);
  // The server's last word (a FATAL error: "rolled back, nothing of it was
  // written") may or may not reach the client before the closed socket
  // does; the tables below show what was written either way.
  const std::string& told = appended.error().message;
  CHECK((told.find("nothing of it was written") != std::string::npos ||
         told.find("may or may not have committed") != std::string::npos));
  // Later appends are refused until the store reconnects.
  std::vector<log::AppendEntry> third{text_entry("c1", "d")};
  auto refused = store->append(third);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kUnavailable);
  for (const char* table :
       {"parley_log", "parley_channel_index", "parley_idempotency"}) {
    CAPTURE(table);
    CHECK(testing::run_sql(database.uri(),
                           std::string("SELECT count(*) FROM ") + table) ==
          "1");
  }

  // resume() reconnects (the cut session has ended, its lock with it): the
  // same store goes on after its last durable record, without a reopen.
  auto resumed = store->resume();
  REQUIRE_MESSAGE(resumed.has_value(), testing::error_message(resumed));
  CHECK(store->last_sequence() == 1);
  CHECK(*store->last_channel_sequence("c1") == 1);
  CHECK(*store->last_channel_sequence("c2") == 0);
  CHECK(*store->find_idempotency_key("k2") == std::nullopt);
  auto next = store->append(second);
  REQUIRE_MESSAGE(next.has_value(), testing::error_message(next));
  CHECK(next->front().log_sequence == 2);
  CHECK(next->back().channel_sequence == 1);
  REQUIRE(store->close());
  auto reopened = open_store(database.uri());
  CHECK(reopened->last_sequence() == 3);
}

TEST_CASE("a fenced writer never writes again") {
  testing::ScratchDatabase database;
  auto store = open_store(database.uri());
  std::vector<log::AppendEntry> first{text_entry("c1", "a")};
  REQUIRE(store->append(first));
  // Another writer took the store over: its open bumped the epoch.
  REQUIRE(testing::run_sql(database.uri(),
                           "UPDATE parley_writer SET epoch = epoch + 1"));
  std::vector<log::AppendEntry> second{text_entry("c1", "b", "k")};
  auto fenced = store->append(second);
  REQUIRE_FALSE(fenced.has_value());
  CHECK(fenced.error().code == ErrorCode::kFailed);
  CHECK(fenced.error().message.find("this writer was fenced") !=
        std::string::npos);
  std::vector<log::AppendEntry> third{text_entry("c1", "c")};
  auto again = store->append(third);
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == ErrorCode::kFailed);
  CHECK(testing::run_sql(database.uri(), "SELECT count(*) FROM parley_log") ==
        "1");
  CHECK(testing::run_sql(database.uri(),
                         "SELECT count(*) FROM parley_channel_index") == "1");
  REQUIRE(store->close());
  auto next = open_store(database.uri());
  CHECK(next->last_sequence() == 1);
  REQUIRE(next->append(second));
  CHECK(*next->find_idempotency_key("k") == 2);
}

TEST_CASE("a live writer keeps its lease: another open is refused with busy") {
  testing::ScratchDatabase database;
  auto store = log::open_postgres_log_store(
      database.uri(), {.lease_timeout = std::chrono::milliseconds(600)});
  REQUIRE(store.has_value());
  // Past the lease: only renewals keep it.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto second = log::open_postgres_log_store(
      database.uri(), {.lock_patience = std::chrono::milliseconds(0)});
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().code == ErrorCode::kBusy);
  CHECK(second.error().message.find("renews its lease") != std::string::npos);
  std::vector<log::AppendEntry> batch{text_entry("c1", "a")};
  CHECK(store->store->append(batch).has_value());
}

TEST_CASE(
    "a writer whose lease lapsed is taken over: its session is ended and "
    "it is told it lost the store and never writes again") {
  testing::ScratchDatabase database;
  std::atomic<bool> lost = false;
  std::string why;
  std::mutex why_mutex;
  auto old = log::open_postgres_log_store(
      database.uri(), {.lease_timeout = std::chrono::milliseconds(3000),
                       .on_writer_lost = [&](const log::Error& error) {
                         std::lock_guard lock(why_mutex);
                         why = error.message;
                         lost = true;
                       }});
  REQUIRE(old.has_value());
  std::vector<log::AppendEntry> first{text_entry("c1", "a")};
  REQUIRE(old->store->append(first));
  // As if its hub had gone silent three seconds ago.
  REQUIRE(testing::run_sql(database.uri(),
                           "UPDATE parley_writer SET lease_until = "
                           "clock_timestamp() - interval '1 second'"));
  auto taken = log::open_postgres_log_store(
      database.uri(), {.lock_patience = std::chrono::milliseconds(0)});
  REQUIRE_MESSAGE(taken.has_value(), testing::error_message(taken));
  CHECK(taken->lapsed_writers_ended == 1);
  CHECK(taken->store->last_sequence() == 1);

  std::vector<log::AppendEntry> second{text_entry("c1", "b")};
  auto refused = old->store->append(second);
  REQUIRE_FALSE(refused.has_value());
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!lost && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(lost);
  {
    std::lock_guard lock(why_mutex);
    CHECK_MESSAGE(why.find("this writer was fenced") != std::string::npos, why);
  }
  std::vector<log::AppendEntry> third{text_entry("c1", "c")};
  auto after = old->store->append(third);
  REQUIRE_FALSE(after.has_value());
  CHECK(after.error().code == ErrorCode::kFailed);

  std::vector<log::AppendEntry> fourth{text_entry("c1", "d")};
  auto appended = taken->store->append(fourth);
  REQUIRE_MESSAGE(appended.has_value(), testing::error_message(appended));
  CHECK(appended->front().log_sequence == 2);
  CHECK(testing::run_sql(database.uri(), "SELECT count(*) FROM parley_log") ==
        "2");
}

using testing::OwnServer;

TEST_CASE(
    "a PostgreSQL restart under load fails the appends in flight and "
    "loses no acked one and the store reconnects at resume()") {
  OwnServer server;
  const std::string uri = server.uri();
  auto store = open_store(uri);
  constexpr int kThreads = 4;
  struct Appender {
    std::vector<std::pair<std::uint64_t, std::string>> acked;
    std::optional<log::Error> ended;
  };
  std::vector<Appender> appenders(kThreads);
  std::atomic<bool> stop = false;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; !stop; ++i) {
          const std::string text = std::to_string(t) + ":" + std::to_string(i);
          std::vector<log::AppendEntry> batch{
              text_entry("c" + std::to_string(t), text, "k" + text)};
          auto appended = store->append(batch);
          if (!appended) {
            appenders[t].ended = appended.error();
            return;
          }
          appenders[t].acked.emplace_back(appended->front().log_sequence, text);
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto restarted = server.restart();
    REQUIRE_MESSAGE(restarted.exit_code == 0, restarted.err);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  }
  std::size_t acked = 0;
  bool unavailable_seen = false;
  for (const Appender& appender : appenders) {
    REQUIRE(appender.ended.has_value());
    INFO(appender.ended->message);
    // A group cut by the restart, or the refusal until the store
    // reconnects; or a sequencer's lookup on a reading connection the
    // restart cut.
    CHECK((appender.ended->code == ErrorCode::kUnavailable ||
           appender.ended->code == ErrorCode::kIoError));
    unavailable_seen |= appender.ended->code == ErrorCode::kUnavailable;
    acked += appender.acked.size();
  }
  CHECK(acked > 0);
  // The same store reconnects (resume() tries at most once a second). If
  // every appender ended in a lookup, the writer's connection meets the
  // restart only at the next append, which fails as unavailable and is
  // retried after resume() too.
  log::Result<std::vector<log::Position>> appended = std::unexpected(
      log::Error{ErrorCode::kUnavailable, "not appended after resume()"});
  for (int attempt = 0; attempt < 100; ++attempt) {
    const log::Result<void> resumed = store->resume();
    if (resumed) {
      std::vector<log::AppendEntry> resumed_entry{
          text_entry("c0", "resumed", "kresumed")};
      appended = store->append(resumed_entry);
      if (appended || appended.error().code != ErrorCode::kUnavailable) break;
      unavailable_seen = true;
    } else {
      REQUIRE_MESSAGE(resumed.error().code == ErrorCode::kUnavailable,
                      resumed.error().message);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  CHECK(unavailable_seen);  // the writer's loss, in flight or after
  REQUIRE_MESSAGE(appended.has_value(), testing::error_message(appended));
  (void)store->close();

  // Every acked record is there, once; nothing is half-written.
  auto reopened = open_store(uri);
  std::map<std::uint64_t, std::string> found;
  std::map<std::string, int> seen;
  REQUIRE(reopened->read(1, log::kLastSequence,
                         [&](std::uint64_t sequence, std::string_view record) {
                           found[sequence] = testing::text_of(record);
                           ++seen[found[sequence]];
                           return true;
                         }));
  CHECK(found.size() == reopened->last_sequence());
  for (const auto& item : seen) {
    // Not bindings: a lambda captures them, which clang 14 cannot.
    const auto& text = item.first;
    const auto& count = item.second;
    CAPTURE(text);
    CHECK(count == 1);
  }
  for (const Appender& appender : appenders) {
    for (const auto& acked : appender.acked) {
      const std::uint64_t sequence = acked.first;
      CAPTURE(sequence);
      CHECK(found[sequence] == acked.second);
    }
  }
  std::uint64_t indexed = 0;
  REQUIRE(reopened->scan_channel_index([&](auto, auto, auto) {
    ++indexed;
    return true;
  }));
  std::uint64_t keys = 0;
  REQUIRE(reopened->scan_idempotency_index([&](auto, auto) {
    ++keys;
    return true;
  }));
  CHECK(indexed == found.size());
  CHECK(keys == found.size());
  std::vector<log::AppendEntry> after{text_entry("c0", "after")};
  REQUIRE(reopened->append(after));
}

// ---- A hub on PostgreSQL, through the `parley` binary.

// Rewrites 32-hex ids to idN in order of first appearance, so two runs that
// drew different ids compare equal.
class IdCanon {
 public:
  std::string operator()(const std::string& text) {
    static const std::regex kId("\\b[0-9a-f]{32}\\b");
    std::string out;
    auto tail = text.cbegin();
    for (std::sregex_iterator it(text.begin(), text.end(), kId), end; it != end;
         ++it) {
      out.append(tail, (*it)[0].first);
      auto [slot, added] =
          ids_.try_emplace(it->str(), "id" + std::to_string(ids_.size() + 1));
      out += slot->second;
      tail = (*it)[0].second;
    }
    out.append(tail, text.cend());
    return out;
  }

 private:
  std::map<std::string, std::string> ids_;
};

testing::CommandRun parley(const std::string& arguments) {
  return testing::run_command(std::string(PARLEY_BINARY) + " " + arguments);
}

std::string shell_quoted(const std::string& text) { return "'" + text + "'"; }

// The state hash `parley audit` prints in its summary line.
std::string state_hash(const std::string& audit_output) {
  const std::size_t at = audit_output.rfind("state hash ");
  REQUIRE(at != std::string::npos);
  return audit_output.substr(at + 11, 16);
}

TEST_CASE(
    "a hub on PostgreSQL runs the golden scripts as on RocksDB and "
    "the tools read both alike") {
  for (const char* script :
       {"basics", "random-1", "random-2", "random-3", "random-4", "random-5"}) {
    const std::string name = script;
    CAPTURE(name);
    testing::ScratchDatabase database;
    testing::ScratchDir dir;
    const std::string pg = shell_quoted(database.uri());
    const std::string rocks = shell_quoted((dir.path() / "store").string());
    const std::string path =
        std::string(PARLEY_GOLDEN_DIR) + "/scripts/" + script + ".jsonl";
    auto on_pg = parley("exec --data " + pg + " " + path);
    auto on_rocks = parley("exec --data " + rocks + " " + path);
    REQUIRE_MESSAGE(on_pg.exit_code == 0, on_pg.err);
    REQUIRE(on_rocks.exit_code == 0);
    CHECK(on_pg.out.size() > 100);
    CHECK(IdCanon()(on_pg.out) == IdCanon()(on_rocks.out));

    for (const char* command :
         {"channels -o jsonl", "agents -o jsonl", "log dump -o jsonl"}) {
      CAPTURE(command);
      auto read_pg = parley(std::string(command) + " --data " + pg);
      auto read_rocks = parley(std::string(command) + " --data " + rocks);
      REQUIRE_MESSAGE(read_pg.exit_code == 0, read_pg.err);
      CHECK(IdCanon()(read_pg.out) == IdCanon()(read_rocks.out));
    }
    auto audit_pg = parley("audit -o text --data " + pg);
    auto audit_rocks = parley("audit -o text --data " + rocks);
    CHECK_MESSAGE(audit_pg.exit_code == 0, audit_pg.out << audit_pg.err);
    CHECK(audit_rocks.exit_code == 0);
    // Ids differ between two runs, and so do the state hashes: the
    // summaries agree up to the hash (the copy test compares hashes).
    auto summary = [](const std::string& out) {
      return out.substr(0, out.rfind(", state hash"));
    };
    CHECK(summary(audit_pg.out) == summary(audit_rocks.out));
    CHECK(audit_pg.out.find("problems 0") != std::string::npos);
  }
}

TEST_CASE(
    "a command against a database that does not answer gives up after the "
    "connect timeout and exits 74") {
  OwnServer server;
  const std::string uri = server.uri();
  // It answers: there is no store in it.
  REQUIRE(parley("log info --data " + shell_quoted(uri)).exit_code == 66);
  auto paused = server.pause();
  REQUIRE_MESSAGE(paused.exit_code == 0, paused.err);
  const auto started = std::chrono::steady_clock::now();
  auto info = parley("log info --data " + shell_quoted(uri) + " 2>&1");
  const auto took = std::chrono::steady_clock::now() - started;
  auto resumed = server.resume();
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.err);
  CHECK(info.exit_code == 74);
  CHECK(info.out.find("cannot connect to PostgreSQL: PostgreSQL did not "
                      "answer in time") != std::string::npos);
  CHECK(took >= std::chrono::seconds(9));
  CHECK(took < std::chrono::seconds(30));
}

TEST_CASE("a password in the store's URI appears in no output") {
  testing::ScratchDatabase database;
  // The test server trusts local connections, so any password works.
  std::string uri = database.uri();
  uri.insert(uri.find("://") + 3, "parley:hunter2@");
  // A URI with userinfo needs a host; the socket directory is in `host=`.
  auto run = parley("serve --check-config --data " + shell_quoted(uri));
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("hunter2") == std::string::npos);
  CHECK(run.out.find("parley:***@") != std::string::npos);
  auto info = parley("log info --data " + shell_quoted(uri));
  CHECK(info.out.find("hunter2") == std::string::npos);
  CHECK(info.err.find("hunter2") == std::string::npos);
  REQUIRE(parley("exec --data " + shell_quoted(uri) + " " + PARLEY_GOLDEN_DIR +
                 "/scripts/basics.jsonl")
              .exit_code == 0);
  for (const char* command :
       {"stats -o jsonl", "stats -o text", "audit -o text", "log info"}) {
    CAPTURE(command);
    auto run_it = parley(std::string(command) + " --data " + shell_quoted(uri));
    CHECK(run_it.exit_code == 0);
    if (!std::string_view(command).starts_with("audit")) {
      CHECK(run_it.out.find("parley:***@") != std::string::npos);
    }
    CHECK(run_it.out.find("hunter2") == std::string::npos);
    CHECK(run_it.err.find("hunter2") == std::string::npos);
  }
}

TEST_CASE(
    "parley copy RocksDB -> PostgreSQL -> RocksDB keeps every record "
    "and the state hash") {
  testing::ScratchDir dir;
  testing::ScratchDatabase database;
  const std::string first = shell_quoted((dir.path() / "first").string());
  const std::string pg = shell_quoted(database.uri());
  const std::string back = shell_quoted((dir.path() / "back").string());
  auto made = parley("exec --data " + first + " " + PARLEY_GOLDEN_DIR +
                     "/scripts/random-3.jsonl");
  REQUIRE(made.exit_code == 0);
  auto there = parley("copy --from " + first + " --to " + pg);
  REQUIRE_MESSAGE(there.exit_code == 0, there.err);
  CHECK(there.out.find("audit clean") != std::string::npos);
  auto home = parley("copy --from " + pg + " --to " + back);
  REQUIRE_MESSAGE(home.exit_code == 0, home.err);
  auto audit_first = parley("audit -o text --data " + first);
  auto audit_pg = parley("audit -o text --data " + pg);
  auto audit_back = parley("audit -o text --data " + back);
  REQUIRE(audit_first.exit_code == 0);
  CHECK(state_hash(audit_pg.out) == state_hash(audit_first.out));
  CHECK(state_hash(audit_back.out) == state_hash(audit_first.out));
  // The same records: the dumps are equal byte for byte, ids included.
  auto dump_first = parley("log dump -o jsonl --data " + first);
  auto dump_back = parley("log dump -o jsonl --data " + back);
  CHECK(dump_first.out.size() > 1000);
  CHECK(dump_first.out == dump_back.out);

  // Into a store that holds records: refused, nothing written.
  auto again = parley("copy --from " + first + " --to " + pg);
  CHECK(again.exit_code == 64);
  CHECK(again.err.find("a copy goes only into an empty store") !=
        std::string::npos);
}

TEST_CASE("the golden AG2 store imports into PostgreSQL as into RocksDB") {
  testing::ScratchDir dir;
  testing::ScratchDatabase database;
  const std::string golden =
      std::string(PARLEY_GOLDEN_DIR) + "/ag2-store-smoke";
  const std::string pg = shell_quoted(database.uri());
  const std::string rocks = shell_quoted((dir.path() / "store").string());
  auto into_pg = parley("import-ag2 --data " + pg + " " + golden);
  auto into_rocks = parley("import-ag2 --data " + rocks + " " + golden);
  REQUIRE_MESSAGE(into_pg.exit_code == 0, into_pg.err);
  REQUIRE(into_rocks.exit_code == 0);
  auto audit_pg = parley("audit -o text --data " + pg);
  auto audit_rocks = parley("audit -o text --data " + rocks);
  CHECK_MESSAGE(audit_pg.exit_code == 0, audit_pg.out);
  CHECK(state_hash(audit_pg.out) == state_hash(audit_rocks.out));
  auto export_pg = parley("export-ag2 --data " + pg + " " +
                          shell_quoted((dir.path() / "from-pg").string()));
  REQUIRE_MESSAGE(export_pg.exit_code == 0, export_pg.err);
  auto export_rocks =
      parley("export-ag2 --data " + rocks + " " +
             shell_quoted((dir.path() / "from-rocks").string()));
  REQUIRE(export_rocks.exit_code == 0);
  auto diff = testing::run_command(
      "diff -r " + shell_quoted((dir.path() / "from-pg").string()) + " " +
      shell_quoted((dir.path() / "from-rocks").string()));
  CHECK_MESSAGE(diff.exit_code == 0, diff.out);
}

TEST_CASE(
    "the read-only commands read a hot standby of the database as its "
    "primary and a writer is refused there") {
  OwnServer primary;
  const std::string replica_state =
      (primary.dir.path() / "replica.uri").string();
  auto made =
      testing::run_command(std::string(PARLEY_POSTGRES_SERVER) + " replica " +
                           primary.state + " " + replica_state);
  REQUIRE_MESSAGE(made.exit_code == 0, made.err);
  struct StopReplica {
    std::string state;
    ~StopReplica() {
      (void)testing::run_command(std::string(PARLEY_POSTGRES_SERVER) +
                                 " stop " + state);
    }
  } stop_replica{replica_state};
  std::string replica;
  std::getline(std::ifstream(replica_state), replica);
  const std::string source = primary.uri();
  REQUIRE(parley("exec --data " + shell_quoted(source) + " " +
                 PARLEY_GOLDEN_DIR + "/scripts/basics.jsonl")
              .exit_code == 0);
  const std::string records =
      testing::run_sql(source, "SELECT count(*) FROM parley_log").value();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (testing::run_sql(replica, "SELECT count(*) FROM parley_log") !=
             records &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (const char* command :
       {"channels", "agents", "log dump", "audit -o jsonl"}) {
    CAPTURE(command);
    auto on_primary =
        parley(std::string(command) + " --data " + shell_quoted(source));
    auto on_replica =
        parley(std::string(command) + " --data " + shell_quoted(replica));
    CHECK(on_primary.exit_code == 0);
    CHECK_MESSAGE(on_replica.exit_code == 0, on_replica.err);
    CHECK(on_replica.out == on_primary.out);
  }
  auto written = parley("exec --data " + shell_quoted(replica) + " " +
                        PARLEY_GOLDEN_DIR + "/scripts/basics.jsonl");
  CHECK(written.exit_code == 69);
  CHECK_MESSAGE(written.err.find("is a read-only server (a hot standby") !=
                    std::string::npos,
                written.err);
  auto opened = log::open_postgres_log_store(replica);
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().code == ErrorCode::kReadOnly);
}

TEST_SUITE_END();

}  // namespace
}  // namespace parley
