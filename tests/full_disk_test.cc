// A disk that fills up under the log: RocksDB's writes fail with ENOSPC
// (injected through its FileSystem, as a full disk makes them fail) while
// records are written and while memtables are flushed. Nothing acked may be
// lost, reads go on while the disk stays full, and once space is freed the
// store and the hub accept writes again without being reopened.
#include <doctest/doctest.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <atomic>

#include "engine/base/flex_json.h"
#include "engine/hub/hub.h"
#include "log/rocksdb_log_store.h"
#include "tests/crashtest/power_cut_fs.h"
#include "tests/hub_fixture.h"
#include "tests/test_support.h"

namespace parley {
namespace {

using log::ErrorCode;
using testing::text_entry;
using testing::text_of;

// A scratch directory whose stores open through a PowerCutFileSystem
// (tests/crashtest/power_cut_fs.h) that fills up on demand: appends to WAL
// files and table files (memtable flushes) fail with ENOSPC, as on a full
// disk. Stores opened from it must be gone before it is.
struct FillingDisk {
  testing::ScratchDir dir;
  std::shared_ptr<crashtest::PowerCutFileSystem> file_system =
      std::make_shared<crashtest::PowerCutFileSystem>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(file_system);

  // From now on appends to WAL files (`wal`) and table files (`tables`)
  // fail; fill(false, false) frees the space.
  void fill(bool wal, bool tables) {
    if (!wal && !tables) {
      file_system->faults().disarm();
      return;
    }
    file_system->faults().arm({.kind = crashtest::IoFault::Kind::kNoSpace,
                               .ops = crashtest::IoFault::kAppend,
                               .files = [wal, tables](const std::string& name) {
                                 return (wal && name.ends_with(".log")) ||
                                        (tables && name.ends_with(".sst"));
                               }});
  }

  log::OpenedLogStore open(std::size_t write_buffer_size = 0) {
    auto opened = log::open_rocksdb_log_store(
        dir.path(), {.env = env.get(), .write_buffer_size = write_buffer_size});
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    return std::move(*opened);
  }
};

log::Result<std::vector<log::Position>> append_text(log::LogStore& store,
                                                    std::string_view text) {
  std::vector<log::AppendEntry> batch{text_entry("c1", text)};
  return store.append(batch);
}

std::vector<std::string> all_texts(const log::LogStore& store) {
  std::vector<std::string> seen;
  auto read =
      store.read(1, log::kLastSequence, [&](auto, std::string_view record) {
        seen.push_back(text_of(record));
        return true;
      });
  REQUIRE_MESSAGE(read.has_value(), testing::error_message(read));
  return seen;
}

TEST_CASE(
    "a WAL write that finds the disk full fails, and appends resume "
    "once space is freed, without a reopen") {
  FillingDisk disk;
  {
    auto opened = disk.open();
    log::LogStore& store = *opened.store;
    REQUIRE(append_text(store, "1").has_value());
    REQUIRE(append_text(store, "2").has_value());
    disk.fill(true, false);
    auto failed = append_text(store, "lost");
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code == ErrorCode::kNoSpace);
    // Refused without a write until the store resumes.
    auto refused = append_text(store, "refused");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == ErrorCode::kNoSpace);
    CHECK(refused.error().message.find("until space is freed") !=
          std::string::npos);
    disk.fill(false, false);
    auto resumed = store.resume();
    REQUIRE_MESSAGE(resumed.has_value(), testing::error_message(resumed));
    auto next = append_text(store, "3");
    REQUIRE_MESSAGE(next.has_value(), testing::error_message(next));
    CHECK((*next)[0].log_sequence == 3);  // dense: the lost batch left no gap
    CHECK(all_texts(store) == std::vector<std::string>{"1", "2", "3"});
  }
  auto reopened = disk.open();
  CHECK(all_texts(*reopened.store) == std::vector<std::string>{"1", "2", "3"});
}

TEST_CASE(
    "a memtable flush that finds the disk full stops appends until "
    "space is freed, and loses nothing acked") {
  FillingDisk disk;
  std::vector<std::string> acked;
  {
    // Small memtables: a few appends fill one and start a flush.
    auto opened = disk.open(/*write_buffer_size=*/64 << 10);
    log::LogStore& store = *opened.store;
    disk.fill(false, true);
    const std::string padding(1000, 'x');
    bool refused = false;
    for (int i = 0; i < 2000 && !refused; ++i) {
      const std::string text = std::to_string(i) + padding;
      auto appended = append_text(store, text);
      if (appended) {
        acked.push_back(text);
      } else {
        CHECK(appended.error().code == ErrorCode::kNoSpace);
        refused = true;
      }
    }
    REQUIRE_MESSAGE(refused, "the failed flush never stopped appends");
    CHECK_FALSE(store.resume().has_value());
    disk.fill(false, false);
    auto resumed = store.resume();
    REQUIRE_MESSAGE(resumed.has_value(), testing::error_message(resumed));
    auto next = append_text(store, "after");
    REQUIRE_MESSAGE(next.has_value(), testing::error_message(next));
    acked.push_back("after");
    CHECK(all_texts(store) == acked);
  }
  auto reopened = disk.open();
  CHECK(all_texts(*reopened.store) == acked);
}

TEST_CASE(
    "a hub whose disk filled up refuses posts, then accepts them again "
    "once space is freed, with its state rebuilt from the log") {
  FillingDisk disk;
  testing::TestHub hub({}, {.env = disk.env.get()});
  const std::string alice = hub.add_agent("alice");
  const std::string bob = hub.add_agent("bob");
  auto channel = hub.open(alice, "conversation", {bob});
  REQUIRE_MESSAGE(channel.has_value(), testing::error_message(channel));
  const std::string id = channel->channel_id;
  REQUIRE(hub.say(id, alice, "one").has_value());

  disk.fill(true, false);
  auto lost = hub.say(id, bob, "lost");
  REQUIRE_FALSE(lost.has_value());
  CHECK(lost.error().kind == engine::ErrorKind::kStorage);
  CHECK(lost.error().message.find("the disk is full") != std::string::npos);
  REQUIRE(hub.hub().health().failure.has_value());
  CHECK(hub.hub().health().failure->find("disk filled up") !=
        std::string::npos);
  auto refused = hub.say(id, bob, "refused");
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == engine::ErrorKind::kStorage);

  disk.fill(false, false);
  auto after = hub.say(id, bob, "two");
  REQUIRE_MESSAGE(after.has_value(), testing::error_message(after));
  CHECK_FALSE(hub.hub().health().failure.has_value());
  auto texts = [&] {
    std::vector<std::string> out;
    for (const auto& envelope : hub.wal(id)) {
      if (envelope.event_type == "ag2.msg.text") {
        out.push_back(engine::flex_to_json(envelope.event_data)["text"]);
      }
    }
    return out;
  };
  CHECK(texts() == std::vector<std::string>{"one", "two"});
  const nlohmann::json live_state = hub.state(id);
  hub.restart();
  CHECK(hub.state(id) == live_state);
  CHECK(texts() == std::vector<std::string>{"one", "two"});
}

TEST_CASE(
    "while the disk stays full, the store and the hub keep serving reads "
    "(the store cannot reopen for writing)") {
  FillingDisk disk;
  testing::TestHub hub({}, {.env = disk.env.get()});
  const std::string alice = hub.add_agent("alice");
  const std::string bob = hub.add_agent("bob");
  auto channel = hub.open(alice, "conversation", {bob});
  REQUIRE_MESSAGE(channel.has_value(), testing::error_message(channel));
  const std::string id = channel->channel_id;
  REQUIRE(hub.say(id, alice, "one").has_value());
  const std::vector<engine::Envelope> before = hub.wal(id);

  // Reopening the store for writing flushes the replayed WAL into a table
  // file: with tables full too, every resume fails.
  disk.fill(true, true);
  REQUIRE_FALSE(hub.say(id, bob, "lost").has_value());
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto refused = hub.say(id, bob, "refused");
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().kind == engine::ErrorKind::kStorage);
    CHECK(refused.error().message.find("injected ENOSPC") != std::string::npos);
    auto wal = hub.hub().read_wal(id, 0);
    REQUIRE_MESSAGE(wal.has_value(), testing::error_message(wal));
    REQUIRE(wal->size() == before.size());
    CHECK(wal->back().envelope_id == before.back().envelope_id);
    auto sequence = [&] {
      std::uint64_t last = 0;
      auto read = hub.hub().store().read(
          1, log::kLastSequence, [&](std::uint64_t at, std::string_view) {
            last = at;
            return true;
          });
      REQUIRE_MESSAGE(read.has_value(), testing::error_message(read));
      return last;
    };
    CHECK(sequence() == hub.hub().store().last_sequence());
  }
  CHECK(hub.hub().get_channel(id).has_value());

  disk.fill(false, false);
  auto after = hub.say(id, bob, "two");
  REQUIRE_MESSAGE(after.has_value(), testing::error_message(after));
  hub.restart();
  std::vector<std::string> texts;
  for (const auto& envelope : hub.wal(id)) {
    if (envelope.event_type == "ag2.msg.text") {
      texts.push_back(engine::flex_to_json(envelope.event_data)["text"]);
    }
  }
  CHECK(texts == std::vector<std::string>{"one", "two"});
}

}  // namespace
}  // namespace parley
