// Reads that fail under a hub (issue 16): EIO injected through the crash
// campaign's PowerCutFileSystem (tests/crashtest/io_fault.h) into every
// read a hub's open makes, one at a time, and into reads while it serves.
// An open a read error stops is refused naming the failure, never opened
// to an empty or partial state; a read that fails while the hub serves
// fails alone, and the hub goes on.
#include <doctest/doctest.h>
#include <rocksdb/env.h>

#include <filesystem>
#include <map>

#include "engine/base/flex_json.h"
#include "engine/hub/hub.h"
#include "log/rocksdb_log_store.h"
#include "tests/crashtest/power_cut_fs.h"
#include "tests/hub_fixture.h"
#include "tests/test_support.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
using crashtest::IoFault;
using crashtest::PowerCutFileSystem;

constexpr std::size_t kAll = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kSmallMemtables = 64 << 10;

// What a hub holds: its agents, and every channel's envelope ids.
struct Contents {
  std::size_t agents = 0;
  std::map<std::string, std::vector<std::string>> channels;
  bool operator==(const Contents&) const = default;
};

Contents contents_of(engine::Hub& hub) {
  Contents out;
  out.agents = hub.list_agents({.limit = kAll}).size();
  for (const auto& channel :
       hub.list_channels(std::nullopt, std::nullopt, kAll)) {
    auto wal = hub.read_wal(channel.channel_id, 0);
    REQUIRE_MESSAGE(wal.has_value(), testing::error_message(wal));
    auto& ids = out.channels[channel.channel_id];
    for (const engine::Envelope& envelope : *wal) {
      ids.push_back(envelope.envelope_id);
    }
  }
  return out;
}

// A closed store with table files (small memtables, flushed as the hub
// wrote) and a WAL (what it wrote after its last restart), copied to
// `dir`; returns what its hub held.
Contents build_store(const fs::path& dir) {
  testing::TestHub hub({}, {.durability = log::Durability::kSync,
                            .write_buffer_size = kSmallMemtables});
  const std::string alice = hub.add_agent("alice");
  const std::string bob = hub.add_agent("bob");
  const std::string carol = hub.add_agent("carol");
  std::vector<std::string> channels;
  for (const std::string& invitee : {bob, carol}) {
    auto channel = hub.open(alice, "conversation", {invitee});
    REQUIRE_MESSAGE(channel.has_value(), testing::error_message(channel));
    channels.push_back(channel->channel_id);
  }
  const std::string padding(400, 'x');
  auto talk = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string& channel = channels[i % 2];
      const std::string sender = i % 4 < 2 ? alice : i % 2 == 0 ? bob : carol;
      auto said = hub.say(channel, sender, std::to_string(i) + padding);
      REQUIRE_MESSAGE(said.has_value(), testing::error_message(said));
    }
  };
  talk(0, 400);
  hub.restart();
  talk(400, 420);
  Contents contents = contents_of(hub.hub());
  REQUIRE(hub.hub().close().has_value());
  fs::copy(hub.data() / "store", dir, fs::copy_options::recursive);
  return contents;
}

struct FaultyDisk {
  std::shared_ptr<PowerCutFileSystem> file_system =
      std::make_shared<PowerCutFileSystem>();
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(file_system);
};

// Opens the store and a hub on it, through `disk`.
engine::Result<std::unique_ptr<engine::Hub>> open_hub(const fs::path& dir,
                                                      FaultyDisk& disk) {
  auto store = log::open_rocksdb_log_store(
      dir, {.env = disk.env.get(), .write_buffer_size = kSmallMemtables});
  if (!store) return engine::storage_error(store.error());
  return engine::Hub::open(
      {.store = std::shared_ptr<log::LogStore>(std::move(store->store)),
       .clock = std::make_shared<engine::ManualClock>(
           engine::Timestamp(std::chrono::seconds(1767225600)))});
}

TEST_CASE(
    "a read error anywhere in a hub's open refuses it naming the failure, "
    "never an empty or partial state") {
  testing::ScratchDir scratch;
  const fs::path dir = scratch.path() / "store";
  const Contents expected = build_store(dir);
  REQUIRE(expected.channels.size() == 2);

  // How many reads an open makes.
  std::int64_t reads = 0;
  {
    FaultyDisk disk;
    disk.file_system->faults().arm(
        {.ops = IoFault::kRead, .nth = std::numeric_limits<int>::max()});
    auto hub = open_hub(dir, disk);
    REQUIRE_MESSAGE(hub.has_value(), testing::error_message(hub));
    reads = disk.file_system->faults().calls();
    CHECK(contents_of(**hub) == expected);
  }
  REQUIRE(reads > 10);
  int refused = 0;
  for (const bool sticky : {true, false}) {
    for (std::int64_t nth = 1; nth <= reads; ++nth) {
      CAPTURE(sticky);
      CAPTURE(nth);
      FaultyDisk disk;
      disk.file_system->faults().arm(
          {.ops = IoFault::kRead, .nth = nth, .sticky = sticky});
      auto hub = open_hub(dir, disk);
      disk.file_system->faults().disarm();
      if (!hub) {
        ++refused;
        CHECK(hub.error().kind == engine::ErrorKind::kStorage);
        CHECK_MESSAGE(
            hub.error().message.find("injected EIO") != std::string::npos,
            hub.error().message);
        continue;
      }
      // Opened: the read error was met by a retry, or by nothing the open
      // needed; the hub holds everything.
      CHECK(contents_of(**hub) == expected);
    }
  }
  MESSAGE(refused << " of " << 2 * reads << " opens refused");
  CHECK(refused > 0);
  // The store is whole after all those opens.
  FaultyDisk disk;
  auto hub = open_hub(dir, disk);
  REQUIRE_MESSAGE(hub.has_value(), testing::error_message(hub));
  CHECK(contents_of(**hub) == expected);
}

TEST_CASE(
    "a read error while a hub serves fails that read, and the hub goes on") {
  testing::ScratchDir scratch;
  const fs::path dir = scratch.path() / "store";
  Contents expected = build_store(dir);
  const std::string channel = expected.channels.begin()->first;
  for (const bool sticky : {true, false}) {
    CAPTURE(sticky);
    FaultyDisk disk;
    auto hub = open_hub(dir, disk);
    REQUIRE_MESSAGE(hub.has_value(), testing::error_message(hub));
    disk.file_system->faults().arm({.ops = IoFault::kRead, .sticky = sticky});
    // The channel's early envelopes are in table files, not in memory.
    auto failed = (*hub)->read_wal(channel, 0);
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().kind == engine::ErrorKind::kStorage);
    CHECK_MESSAGE(failed.error().message.find("injected EIO on random read") !=
                      std::string::npos,
                  failed.error().message);
    CHECK_FALSE((*hub)->health().failure.has_value());
    CHECK((*hub)->get_channel(channel).has_value());
    CHECK((*hub)->list_agents({.limit = kAll}).size() == expected.agents);
    if (!sticky) {
      // The disk read again.
      auto again = (*hub)->read_wal(channel, 0);
      REQUIRE_MESSAGE(again.has_value(), testing::error_message(again));
      CHECK(again->size() == expected.channels.at(channel).size());
    }
    // A post whose channel's last sequence is looked up on disk: it fails
    // naming the read error, or lands after every earlier envelope (never
    // over one of them).
    Contents after = expected;
    const std::string other = std::next(expected.channels.begin())->first;
    auto channel_of = (*hub)->get_channel(other);
    REQUIRE(channel_of.has_value());
    engine::Envelope text;
    text.channel_id = other;
    text.sender_id = channel_of->creator_id;
    text.event_type = "ag2.msg.text";
    text.event_data = engine::to_flex(nlohmann::json{{"text", "late"}}).value();
    auto posted = (*hub)->post_envelope(std::move(text));
    if (posted) {
      after.channels[other].push_back(*posted);
    } else {
      CHECK(posted.error().kind == engine::ErrorKind::kStorage);
      CHECK_MESSAGE(
          posted.error().message.find("injected EIO") != std::string::npos,
          posted.error().message);
    }
    disk.file_system->faults().disarm();
    CHECK(contents_of(**hub) == after);
    auto wal = (*hub)->read_wal(other, 0);
    REQUIRE(wal.has_value());
    for (std::size_t i = 0; i < wal->size(); ++i) {
      CHECK((*wal)[i].sequence == i + 1);
    }
    REQUIRE((*hub)->close().has_value());
    expected = after;  // the next round opens the store as this one left it
  }
}

// (channel sequence, log sequence) of every entry a read of `channel` from
// its start visits.
using ChannelEntries = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
log::Result<ChannelEntries> channel_entries(const log::LogStore& store,
                                            std::string_view channel) {
  ChannelEntries entries;
  auto read = store.read_channel(
      channel, 1, log::kLastSequence,
      [&](std::uint64_t channel_sequence, std::uint64_t log_sequence, auto) {
        entries.emplace_back(channel_sequence, log_sequence);
        return true;
      });
  if (!read) return std::unexpected(read.error());
  return entries;
}

TEST_CASE(
    "a read error anywhere in a channel read fails it naming the error, or "
    "the read comes back whole") {
  testing::ScratchDir scratch;
  const fs::path dir = scratch.path() / "store";
  const std::string channel = build_store(dir).channels.begin()->first;
  auto open_store = [&](FaultyDisk& disk) {
    auto opened = log::open_rocksdb_log_store(
        dir, {.env = disk.env.get(), .write_buffer_size = kSmallMemtables});
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    return std::move(opened->store);
  };
  // The whole channel, and how many reads reading it makes.
  ChannelEntries expected;
  std::int64_t reads = 0;
  {
    FaultyDisk disk;
    auto store = open_store(disk);
    disk.file_system->faults().arm(
        {.ops = IoFault::kRead, .nth = std::numeric_limits<int>::max()});
    auto whole = channel_entries(*store, channel);
    REQUIRE_MESSAGE(whole.has_value(), testing::error_message(whole));
    expected = *whole;
    reads = disk.file_system->faults().calls();
  }
  REQUIRE(expected.size() > 200);
  REQUIRE(reads > 2);
  int failed = 0;
  for (const bool sticky : {true, false}) {
    for (std::int64_t nth = 1; nth <= reads; ++nth) {
      CAPTURE(sticky);
      CAPTURE(nth);
      FaultyDisk disk;
      auto store = open_store(disk);
      disk.file_system->faults().arm(
          {.ops = IoFault::kRead, .nth = nth, .sticky = sticky});
      auto read = channel_entries(*store, channel);
      disk.file_system->faults().disarm();
      if (read) {
        CHECK(*read == expected);
        continue;
      }
      ++failed;
      CHECK(read.error().code == log::ErrorCode::kIoError);
      CHECK_MESSAGE(
          read.error().message.find("injected EIO") != std::string::npos,
          read.error().message);
    }
  }
  MESSAGE(failed << " of " << 2 * reads << " channel reads failed");
  CHECK(failed > 0);
}

}  // namespace
}  // namespace parley
