// An exhaustive corruption test of a whole closed store: every byte (or,
// in CI, every Nth byte) of each WAL, table and MANIFEST file is flipped in
// turn; the damaged copy is opened read-write and read and, when that
// refuses it, audited afresh as `parley audit` does (read-only).
// Each case must end one of two ways:
//   * exactly the original store: the same records byte for byte, the same
//     channel and idempotency indexes, the same folded state hash;
//   * refused with kCorruption naming the damaged file or log sequence, by
//     the open or by the first read that meets the damage; and the audit
//     of the same copy reports damage too.
// Never a different state, never a crash (a crash kills this test).
// The stores live under /dev/shm when there is one (RocksDB syncs a lot on
// open, and a tmpfs makes a case 2-3 times faster), else under TMPDIR.
//
// The store is tools/examples/tour.jsonl played into RocksDB: four channel
// types, every record kind the tour writes, and a restart, so that the
// records before the restart are in table files and those after it in the
// WAL.
//
// Environment (the seed is printed; a failure names file, offset and mask):
//   PARLEY_CORRUPTION_STRIDE  flip every Nth byte of each file (default 17,
//                             ~730 cases; 1: every byte, the documented
//                             full run)
//   PARLEY_CORRUPTION_SEED    the masks' and the first offsets' seed
//   PARLEY_CORRUPTION_LAST    when set, only the last N bytes of each file
//   PARLEY_CORRUPTION_KINDS   when set, only these kinds of file, e.g.
//                             "wal,manifest" (of sst, wal, manifest)
//   PARLEY_CORRUPTION_TRACE   when set, each case is printed to stderr
//                             before it runs (to find one that crashes)
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "log/open_store.h"
#include "log/rocksdb_log_store.h"
#include "replay/folded_store.h"
#include "replay/state_hash.h"
#include "replay/store_audit.h"
#include "tests/test_support.h"
#include "tools/script_runner.h"

namespace parley {
namespace {

namespace fs = std::filesystem;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::stoull(value) : fallback;
}

void play_tour(const fs::path& dir) {
  auto runner = engine::ScriptRunner::start(
      [dir]() -> engine::Result<std::shared_ptr<log::LogStore>> {
        auto opened = log::open_rocksdb_log_store(dir);
        REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
        return std::shared_ptr<log::LogStore>(std::move(opened->store));
      });
  REQUIRE_MESSAGE(runner.has_value(), testing::error_message(runner));
  std::ifstream script(PARLEY_SOURCE_DIR "/tools/examples/tour.jsonl");
  REQUIRE(script);
  std::string line;
  while (std::getline(script, line)) (void)(*runner)->run_line(line);
}

// Everything a reader of the store can see: its records, its indexes and
// the state they fold to.
struct Contents {
  std::uint64_t last_sequence = 0;
  std::uint64_t records_hash = 0;
  std::uint64_t indexes_hash = 0;
  std::uint64_t state_hash = 0;
  bool operator==(const Contents&) const = default;
};

// The contents of `store`, or the error of the first read that failed.
std::expected<Contents, std::string> contents_of(const log::LogStore& store) {
  auto failed = [](const log::Error& error) {
    return std::unexpected(std::string(log::to_string(error.code)) + ": " +
                           error.message);
  };
  Contents contents{.last_sequence = store.last_sequence()};
  std::string bytes;
  auto read = store.read(1, log::kLastSequence,
                         [&](std::uint64_t sequence, std::string_view record) {
                           bytes += std::to_string(sequence) + ':';
                           bytes += record;
                           return true;
                         });
  if (!read) return failed(read.error());
  contents.records_hash = replay::fnv1a64(bytes);
  bytes.clear();
  auto channels = store.scan_channel_index([&](std::string_view channel,
                                               std::uint64_t channel_sequence,
                                               std::uint64_t log_sequence) {
    bytes += std::string(channel) + ' ' + std::to_string(channel_sequence) +
             ' ' + std::to_string(log_sequence) + '\n';
    return true;
  });
  if (!channels) return failed(channels.error());
  auto keys = store.scan_idempotency_index(
      [&](std::string_view key, std::uint64_t log_sequence) {
        bytes += std::string(key) + ' ' + std::to_string(log_sequence) + '\n';
        return true;
      });
  if (!keys) return failed(keys.error());
  contents.indexes_hash = replay::fnv1a64(bytes);
  auto folded = replay::FoldedStore::fold(store);
  if (!folded) return std::unexpected("fold: " + folded.error().message);
  contents.state_hash = replay::store_state_hash((*folded)->state());
  return contents;
}

// Whether `message` names what is damaged: a file of the store or a log
// sequence.
bool names_damage(const std::string& message) {
  for (const char* what : {".sst", ".log", "MANIFEST", "CURRENT", "OPTIONS",
                           "log sequence", "WAL"}) {
    if (message.find(what) != std::string::npos) return true;
  }
  return false;
}

// What `parley audit` reports for the store in `dir`, read-only: nullopt
// when it finds the store sound, else its first complaint.
std::optional<std::string> audit_damage(const fs::path& dir) {
  auto torn = log::find_torn_wal_tail(dir);
  if (!torn) return torn.error().message;
  if (*torn) return "torn WAL tail: " + **torn;
  auto opened = log::open_store_read_only(dir.string());
  if (!opened) return opened.error().message;
  auto report = replay::audit_store(**opened);
  if (!report) return report.error().message;
  if (!report->clean()) return replay::describe(report->problems.front());
  return std::nullopt;
}

void flip_byte(const fs::path& file, std::uintmax_t offset, char mask) {
  std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(stream);
  stream.seekg(static_cast<std::streamoff>(offset));
  char byte = 0;
  stream.read(&byte, 1);
  byte = static_cast<char>(byte ^ mask);
  stream.seekp(static_cast<std::streamoff>(offset));
  stream.write(&byte, 1);
  REQUIRE(stream);
}

// The files the test damages: WAL, table and MANIFEST files.
std::vector<fs::path> damageable_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const fs::path& path = entry.path();
    const std::string name = path.filename().string();
    if (path.extension() == ".log" && name != "LOG" &&
        !name.starts_with("LOG.")) {
      files.push_back(path);
    } else if (path.extension() == ".sst" || name.starts_with("MANIFEST-")) {
      files.push_back(path);
    }
  }
  std::ranges::sort(files);
  return files;
}

struct Tally {
  int identical = 0;     // opened and read back exactly the original
  int refused_open = 0;  // the open refused, naming the damage
  int refused_read = 0;  // a read refused, naming the damage
  int audit_named = 0;   // of the refused: the audit named damage too
};

TEST_CASE(
    "a WAL record of a type RocksDB never writes here is refused by a "
    "read-only open (a recyclable type hung it)") {
  testing::ScratchDir scratch;
  const fs::path pristine = scratch.path() / "pristine";
  play_tour(pristine);
  std::string wal;
  for (const fs::path& file : damageable_files(pristine)) {
    if (file.extension() == ".log" && fs::file_size(file) > 7) {
      wal = file.filename().string();
    }
  }
  REQUIRE_FALSE(wal.empty());
  for (const int type : {5, 6, 7, 8, 42}) {
    INFO("type " << type);
    const fs::path work = scratch.path() / ("type-" + std::to_string(type));
    fs::copy(pristine, work, fs::copy_options::recursive);
    // The first record's header: CRC (4 bytes), length (2), type (1).
    char byte = 0;
    std::ifstream(work / wal, std::ios::binary).seekg(6).read(&byte, 1);
    REQUIRE(byte == 1);  // a full record
    flip_byte(work / wal, 6, static_cast<char>(byte ^ type));
    auto opened = log::open_store_read_only(work.string());
    REQUIRE_FALSE(opened.has_value());
    CHECK(opened.error().code == log::ErrorCode::kCorruption);
    CHECK(opened.error().message ==
          "the write-ahead log " + wal +
              " is damaged at byte 0: a record of a type this store never "
              "writes");
  }
}

TEST_CASE("every flipped byte of a closed store is refused or harmless" *
          doctest::test_suite("slow")) {
  const std::uint64_t stride = env_number("PARLEY_CORRUPTION_STRIDE", 17);
  const std::uint64_t seed =
      env_number("PARLEY_CORRUPTION_SEED", std::random_device{}());
  const bool trace = std::getenv("PARLEY_CORRUPTION_TRACE") != nullptr;
  const char* kinds_variable = std::getenv("PARLEY_CORRUPTION_KINDS");
  const std::string kinds = kinds_variable ? kinds_variable : "";
  const std::uint64_t last_bytes =
      env_number("PARLEY_CORRUPTION_LAST", ~std::uint64_t{0});
  MESSAGE("seed " << seed << ", every " << stride << "th byte");
  INFO("seed " << seed);
  std::mt19937_64 random(seed);

  std::error_code no_shm;
  if (std::getenv("TMPDIR") == nullptr &&
      fs::is_directory("/dev/shm", no_shm)) {
    ::setenv("TMPDIR", "/dev/shm", 0);
  }
  testing::ScratchDir scratch;
  const fs::path pristine = scratch.path() / "pristine";
  const fs::path work = scratch.path() / "work";
  play_tour(pristine);
  Contents original;
  {
    // A read-write open moves the WAL into table files: open a copy.
    fs::copy(pristine, work, fs::copy_options::recursive);
    auto opened = log::open_rocksdb_log_store(work);
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    auto contents = contents_of(*opened->store);
    REQUIRE_MESSAGE(contents.has_value(), contents.error());
    original = *contents;
  }
  REQUIRE(original.last_sequence > 40);
  REQUIRE_FALSE(audit_damage(pristine).has_value());

  std::map<std::string, Tally> tallies;  // by file kind
  for (const fs::path& file : damageable_files(pristine)) {
    const std::string name = file.filename().string();
    const std::string kind = file.extension() == ".sst"   ? "sst"
                             : file.extension() == ".log" ? "wal"
                                                          : "manifest";
    if (!kinds.empty() && kinds.find(kind) == std::string::npos) continue;
    const std::uintmax_t size = fs::file_size(file);
    MESSAGE(name << ": " << size << " bytes");
    Tally& tally = tallies[kind];
    std::uintmax_t first = random() % stride;
    if (last_bytes < size) first += (size - last_bytes) / stride * stride;
    for (std::uintmax_t offset = first; offset < size; offset += stride) {
      const char mask = static_cast<char>(1 + random() % 255);
      char flip[96];
      std::snprintf(flip, sizeof flip, "%s byte %ju ^ 0x%02x", name.c_str(),
                    offset, static_cast<unsigned>(mask) & 0xffu);
      INFO(flip);
      if (trace) std::fprintf(stderr, "%s\n", flip);
      auto damage_copy = [&] {
        fs::remove_all(work);
        fs::copy(pristine, work, fs::copy_options::recursive);
        flip_byte(work / name, offset, mask);
      };
      damage_copy();
      auto opened = log::open_rocksdb_log_store(work);
      std::optional<std::string> refusal;
      if (!opened) {
        CHECK_MESSAGE(opened.error().code == log::ErrorCode::kCorruption,
                      opened.error().message);
        refusal = opened.error().message;
        ++tally.refused_open;
      } else {
        CHECK_MESSAGE(!opened->recovery.torn_tail, opened->recovery.detail);
        auto contents = contents_of(*opened->store);
        if (!contents) {
          CHECK_MESSAGE(contents.error().starts_with("corruption"),
                        contents.error());
          refusal = contents.error();
          ++tally.refused_read;
        } else {
          CHECK(*contents == original);
          ++tally.identical;
        }
      }
      if (refusal) {
        CHECK_MESSAGE(names_damage(*refusal), *refusal);
        // `parley audit` of the same damage, on a copy no open has touched.
        opened = std::unexpected(log::Error{});
        damage_copy();
        const std::optional<std::string> audited = audit_damage(work);
        CHECK_MESSAGE(audited.has_value(), "the audit missed: " << *refusal);
        if (audited) ++tally.audit_named;
      }
    }
  }
  for (const auto& [kind, tally] : tallies) {
    MESSAGE(kind << ": " << tally.identical << " identical, "
                 << tally.refused_open << " refused at open, "
                 << tally.refused_read << " refused at a read, "
                 << tally.audit_named << " also named by the audit");
  }
}

}  // namespace
}  // namespace parley
