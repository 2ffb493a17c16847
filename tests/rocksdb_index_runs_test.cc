// The RocksDB store's channel index in runs: one entry per channel per
// group, holding the log sequences of the channel's consecutive sequences
// (log/rocksdb_layout.h), and the stores of format 3 written before runs.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "log/rocksdb_layout.h"
#include "log/rocksdb_log_store.h"
#include "tests/rocksdb_raw_store.h"
#include "tests/test_support.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
namespace layout = log::rocksdb_layout;
using log::kLastSequence;
using testing::RawStore;
using testing::text_entry;
using testing::text_of;

constexpr int kChannelIndex = 2;
constexpr int kMeta = 4;

log::OpenedLogStore open_store(const fs::path& dir) {
  auto opened = log::open_rocksdb_log_store(dir);
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  return std::move(*opened);
}

// One append of `texts`, entry i on channels[i].
void append_batch(log::LogStore& store,
                  const std::vector<std::string>& channels,
                  const std::vector<std::string>& texts) {
  std::vector<log::AppendEntry> batch;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    batch.push_back(text_entry(channels[i], texts[i]));
  }
  auto appended = store.append(batch);
  REQUIRE_MESSAGE(appended.has_value(), testing::error_message(appended));
}

// (channel sequence, log sequence, text) of `channel` from `from` to `to`.
using Read = std::tuple<std::uint64_t, std::uint64_t, std::string>;
std::vector<Read> read_channel(const log::LogStore& store,
                               std::string_view channel, std::uint64_t from,
                               std::uint64_t to = kLastSequence) {
  std::vector<Read> seen;
  auto read = store.read_channel(
      channel, from, to,
      [&](std::uint64_t channel_sequence, std::uint64_t log_sequence,
          std::string_view record) {
        seen.emplace_back(channel_sequence, log_sequence, text_of(record));
        return true;
      });
  REQUIRE_MESSAGE(read.has_value(), testing::error_message(read));
  return seen;
}

std::vector<std::uint64_t> decoded(std::string_view run) {
  std::vector<std::uint64_t> sequences;
  REQUIRE(layout::decode_index_run(run, sequences));
  return sequences;
}

TEST_CASE("an index run holds its log sequences, and a run of one is 8 bytes") {
  const std::vector<std::uint64_t> sequences{
      7, 8, 10, 200, 1ull << 40, std::numeric_limits<std::uint64_t>::max()};
  std::string run;
  std::uint64_t previous = 0;
  for (std::uint64_t sequence : sequences) {
    layout::append_to_index_run(run, previous, sequence);
    previous = sequence;
  }
  CHECK(decoded(run) == sequences);
  std::string one;
  layout::append_to_index_run(one, 0, 42);
  CHECK(one == layout::encode_be64(42));
  CHECK(decoded(one) == std::vector<std::uint64_t>{42});
}

TEST_CASE("a malformed index run is refused") {
  const std::string first = layout::encode_be64(5);
  std::vector<std::uint64_t> out;
  CHECK_FALSE(layout::decode_index_run("", out));
  CHECK_FALSE(layout::decode_index_run(first.substr(0, 7), out));
  CHECK_FALSE(layout::decode_index_run(first + "\x81", out));  // unfinished
  CHECK_FALSE(layout::decode_index_run(first + std::string(1, '\0'), out));
  // Past 2^64 - 1.
  CHECK_FALSE(layout::decode_index_run(
      layout::encode_be64(std::numeric_limits<std::uint64_t>::max()) + "\x01",
      out));
  // A varint of more than 64 bits.
  CHECK_FALSE(
      layout::decode_index_run(first + std::string(9, '\xff') + "\x02", out));
  CHECK_FALSE(
      layout::decode_index_run(first + std::string(10, '\x80') + "\x01", out));
}

TEST_CASE("a group's entries of one channel share one index entry") {
  testing::ScratchDir dir;
  {
    auto opened = open_store(dir.path());
    append_batch(*opened.store, {"c1", "c2", "c1", "c1", "c2", "c1"},
                 {"a", "b", "c", "d", "e", "f"});
  }
  const std::vector<std::pair<std::string, std::string>> entries =
      RawStore(dir.path()).entries(kChannelIndex);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].first == layout::channel_key("c1", 1));
  CHECK(decoded(entries[0].second) == std::vector<std::uint64_t>{1, 3, 4, 6});
  CHECK(entries[1].first == layout::channel_key("c2", 1));
  CHECK(decoded(entries[1].second) == std::vector<std::uint64_t>{2, 5});
}

TEST_CASE("a channel read starting inside a run reads from there") {
  testing::ScratchDir dir;
  auto opened = open_store(dir.path());
  log::LogStore& store = *opened.store;
  append_batch(store, {"c1", "c2", "c1", "c1", "c1"},
               {"a", "x", "b", "c", "d"});
  append_batch(store, {"c1", "c1"}, {"e", "f"});
  CHECK(read_channel(store, "c1", 3) ==
        std::vector<Read>{{3, 4, "c"}, {4, 5, "d"}, {5, 6, "e"}, {6, 7, "f"}});
  CHECK(read_channel(store, "c1", 2, 5) ==
        std::vector<Read>{{2, 3, "b"}, {3, 4, "c"}, {4, 5, "d"}, {5, 6, "e"}});
  CHECK(read_channel(store, "c1", 4, 4) == std::vector<Read>{{4, 5, "d"}});
  CHECK(read_channel(store, "c1", 7).empty());
  CHECK(read_channel(store, "c2", 1) == std::vector<Read>{{1, 2, "x"}});
}

TEST_CASE("a channel read names a run that does not decode, from inside it") {
  testing::ScratchDir dir;
  {
    append_batch(*open_store(dir.path()).store, {"c1", "c1", "c1"},
                 {"a", "b", "c"});
  }
  RawStore(dir.path())
      .put(kChannelIndex, layout::channel_key("c1", 1),
           layout::encode_be64(1) + "\x81");
  auto opened = open_store(dir.path());
  for (std::uint64_t from : {1, 2}) {
    CAPTURE(from);
    auto read = opened.store->read_channel(
        "c1", from, kLastSequence, [](auto, auto, auto) { return true; });
    REQUIRE_FALSE(read.has_value());
    CHECK(read.error().code == log::ErrorCode::kCorruption);
    CHECK(read.error().message == "channel index of c1, channel sequence " +
                                      std::to_string(from) +
                                      ": malformed log sequences");
  }
}

TEST_CASE("the next channel sequence follows the last run, across reopen") {
  testing::ScratchDir dir;
  {
    auto opened = open_store(dir.path());
    append_batch(*opened.store, {"c1", "c1", "c1"}, {"a", "b", "c"});
    CHECK(opened.store->last_channel_sequence("c1") == 3);
  }
  auto opened = open_store(dir.path());
  CHECK(opened.store->last_channel_sequence("c1") == 3);
  append_batch(*opened.store, {"c1", "c1"}, {"d", "e"});
  CHECK(opened.store->last_channel_sequence("c1") == 5);
  std::vector<std::tuple<std::string, std::uint64_t, std::uint64_t>> listed;
  auto scanned = opened.store->scan_channel_index(
      [&](std::string_view channel, std::uint64_t channel_sequence,
          std::uint64_t log_sequence) {
        listed.emplace_back(channel, channel_sequence, log_sequence);
        return true;
      });
  REQUIRE(scanned.has_value());
  CHECK(listed == decltype(listed){{"c1", 1, 1},
                                   {"c1", 2, 2},
                                   {"c1", 3, 3},
                                   {"c1", 4, 4},
                                   {"c1", 5, 5}});
}

TEST_CASE(
    "a store of format 3, one index entry per record, reads and is marked "
    "4 when opened to write") {
  testing::ScratchDir dir;
  {
    // Appends of one entry each write what format 3 wrote: one 8-byte
    // index value per record.
    auto opened = open_store(dir.path());
    append_batch(*opened.store, {"c1"}, {"a"});
    append_batch(*opened.store, {"c1"}, {"b"});
  }
  {
    RawStore raw(dir.path());
    for (const auto& [key, value] : raw.entries(kChannelIndex)) {
      CHECK(value.size() == 8);
    }
    raw.put(kMeta, "format_version", "3");
  }
  {
    auto viewed = log::open_rocksdb_log_store_read_only(dir.path());
    REQUIRE_MESSAGE(viewed.has_value(), testing::error_message(viewed));
    CHECK(read_channel(**viewed, "c1", 2) == std::vector<Read>{{2, 2, "b"}});
  }
  CHECK(RawStore(dir.path()).get(kMeta, "format_version") == "3");
  {
    auto opened = open_store(dir.path());
    append_batch(*opened.store, {"c1", "c1"}, {"c", "d"});
    CHECK(
        read_channel(*opened.store, "c1", 1) ==
        std::vector<Read>{{1, 1, "a"}, {2, 2, "b"}, {3, 3, "c"}, {4, 4, "d"}});
  }
  CHECK(RawStore(dir.path()).get(kMeta, "format_version") == "4");
}

}  // namespace
}  // namespace parley
