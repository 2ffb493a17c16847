// The RocksDB backend across reopen, torn tails, corruption and failures.
// Damage is done with real byte surgery on the files RocksDB wrote.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/file_system.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <latch>
#include <thread>

#include "log/rocksdb_clean_close.h"
#include "log/rocksdb_layout.h"
#include "log/rocksdb_log_store.h"
#include "parley/schemas/log_generated.h"
#include "schemas/record_checksum.h"
#include "tests/rocksdb_raw_store.h"
#include "tests/test_support.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
using log::ErrorCode;
using log::kLastSequence;
using testing::RawStore;
using testing::text_entry;
using testing::text_of;

log::OpenedLogStore open_store(const fs::path& dir,
                               log::RocksDbOptions options = {}) {
  auto opened = log::open_rocksdb_log_store(dir, options);
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  return std::move(*opened);
}

void append_texts(log::LogStore& store, int first, int last,
                  std::string_view channel = "c1") {
  for (int i = first; i <= last; ++i) {
    std::vector<log::AppendEntry> batch{
        text_entry(channel, std::to_string(i), "key-" + std::to_string(i))};
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

std::vector<std::string> numbers(int first, int last) {
  std::vector<std::string> out;
  for (int i = first; i <= last; ++i) out.push_back(std::to_string(i));
  return out;
}

// The RocksDB WAL file with the highest number.
fs::path newest_wal(const fs::path& dir) {
  std::vector<fs::path> wals;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".log") wals.push_back(entry.path());
  }
  REQUIRE_FALSE(wals.empty());
  return *std::max_element(wals.begin(), wals.end());
}

TEST_CASE("everything acked before close is there after reopen") {
  testing::ScratchDir dir;
  {
    auto opened = open_store(dir.path());
    CHECK(opened.recovery.created);
    append_texts(*opened.store, 1, 20);
  }
  auto reopened = open_store(dir.path());
  CHECK_FALSE(reopened.recovery.created);
  CHECK_FALSE(reopened.recovery.torn_tail);
  CHECK(reopened.store->last_sequence() == 20);
  CHECK(all_texts(*reopened.store) == numbers(1, 20));
  append_texts(*reopened.store, 21, 25);
  CHECK(reopened.store->last_sequence() == 25);
  CHECK(all_texts(*reopened.store) == numbers(1, 25));
}

TEST_CASE("channel sequences and idempotency keys survive reopen") {
  testing::ScratchDir dir;
  {
    auto opened = open_store(dir.path());
    append_texts(*opened.store, 1, 3, "c1");
    append_texts(*opened.store, 4, 5, "c2");
  }
  auto reopened = open_store(dir.path());
  log::LogStore& store = *reopened.store;
  CHECK(*store.last_channel_sequence("c1") == 3);
  CHECK(*store.find_idempotency_key("key-4") == 4);
  std::vector<log::AppendEntry> batch{text_entry("c1", "6")};
  auto appended = store.append(batch);
  REQUIRE(appended.has_value());
  CHECK((*appended)[0].channel_sequence == 4);
  std::vector<log::AppendEntry> duplicate{text_entry("c2", "7", "key-5")};
  auto conflict = store.append(duplicate);
  REQUIRE_FALSE(conflict.has_value());
  CHECK(conflict.error().code == ErrorCode::kConflict);
}

TEST_CASE("a torn WAL tail is tolerated and reported") {
  testing::ScratchDir dir;
  {
    auto opened = open_store(dir.path());
    append_texts(*opened.store, 1, 30);
  }
  testing::forget_clean_close(dir.path());  // as a crash leaves it
  fs::path wal = newest_wal(dir.path());
  fs::resize_file(wal, fs::file_size(wal) - 3);

  auto reopened = open_store(dir.path());
  CHECK(reopened.recovery.torn_tail);
  CHECK_FALSE(reopened.recovery.detail.empty());
  MESSAGE("torn tail reported as: " << reopened.recovery.detail);
  // The last record was cut; every one before it is intact.
  CHECK(reopened.store->last_sequence() == 29);
  CHECK(all_texts(*reopened.store) == numbers(1, 29));
  append_texts(*reopened.store, 30, 31);
  CHECK(all_texts(*reopened.store) == numbers(1, 31));
}

TEST_CASE("a byte flipped mid-WAL refuses to open and names the damage") {
  testing::ScratchDir dir;
  {
    auto opened = open_store(dir.path());
    append_texts(*opened.store, 1, 100);
  }
  fs::path wal = newest_wal(dir.path());
  std::uintmax_t size = fs::file_size(wal);
  {
    std::fstream file(wal, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(size / 2);
    char byte = 0;
    file.read(&byte, 1);
    file.seekp(size / 2);
    byte = static_cast<char>(byte ^ 0x5a);
    file.write(&byte, 1);
  }
  auto reopened = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(reopened.has_value());
  CHECK(reopened.error().code == ErrorCode::kCorruption);
  MESSAGE("refused with: " << reopened.error().message);
  CHECK(reopened.error().message.find("the RocksDB WAL is damaged") !=
        std::string::npos);
  // Refusing changed nothing: the same damage is found again.
  auto again = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().code == ErrorCode::kCorruption);
}

TEST_CASE("a torn-looking WAL tail after a clean close is refused and kept") {
  testing::ScratchDir dir;
  {
    auto opened = open_store(dir.path());
    append_texts(*opened.store, 1, 30);
  }
  REQUIRE(fs::exists(dir.path() / "PARLEY-CLEAN-CLOSE"));
  fs::path wal = newest_wal(dir.path());
  const std::uintmax_t size = fs::file_size(wal);
  fs::resize_file(wal, size - 3);
  auto torn = log::find_torn_wal_tail(dir.path());
  REQUIRE_FALSE(torn.has_value());
  CHECK(torn.error().code == ErrorCode::kCorruption);
  CHECK(torn.error().message.find("closed cleanly at log sequence 30") !=
        std::string::npos);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto reopened = log::open_rocksdb_log_store(dir.path());
    REQUIRE_FALSE(reopened.has_value());
    CHECK(reopened.error().code == ErrorCode::kCorruption);
    MESSAGE("refused with: " << reopened.error().message);
    CHECK(reopened.error().message.find(
              "closed cleanly at log sequence 30, so a damaged record at its "
              "end is not a torn tail") != std::string::npos);
    // Nothing was cut away.
    CHECK(fs::file_size(wal) == size - 3);
  }
}

TEST_CASE("the clean-close mark goes at open and comes back at close") {
  testing::ScratchDir dir;
  const fs::path mark = dir.path() / "PARLEY-CLEAN-CLOSE";
  {
    auto opened = open_store(dir.path());
    append_texts(*opened.store, 1, 3);
    CHECK_FALSE(fs::exists(mark));
  }
  std::ifstream text(mark);
  std::string line;
  REQUIRE(std::getline(text, line));
  // It names the MANIFEST CURRENT names, with its size.
  std::ifstream current(dir.path() / "CURRENT");
  std::string manifest;
  REQUIRE(std::getline(current, manifest));
  CHECK(line.starts_with(
      "parley clean close: last log sequence 3, " + manifest + " of " +
      std::to_string(fs::file_size(dir.path() / manifest)) + " bytes, xxh3 "));
  {
    auto opened = open_store(dir.path());
    CHECK_FALSE(fs::exists(mark));  // a crash now leaves no mark
  }
  CHECK(fs::exists(mark));
  // A damaged mark is named, with the way out.
  { std::ofstream(mark) << "parley clean close: last log sequence 4\n"; }
  auto refused = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kCorruption);
  CHECK(refused.error().message.find("is damaged; remove it") !=
        std::string::npos);
}

// An Env that says the clean-close mark exists whether it does or not: the
// moment between a reader seeing the mark and a writer's open removing it.
class MarkSeenEnv : public rocksdb::EnvWrapper {
 public:
  MarkSeenEnv() : rocksdb::EnvWrapper(rocksdb::Env::Default()) {}
  const char* Name() const override { return "MarkSeenEnv"; }
  rocksdb::Status FileExists(const std::string& path) override {
    if (path.ends_with("PARLEY-CLEAN-CLOSE")) return rocksdb::Status::OK();
    return target()->FileExists(path);
  }
};

TEST_CASE("a clean-close mark removed after it was seen reads as no mark") {
  testing::ScratchDir dir;
  MarkSeenEnv env;
  auto mark = log::rocksdb_backend::read_clean_close(env, dir.path());
  REQUIRE_MESSAGE(mark.has_value(), testing::error_message(mark));
  CHECK_FALSE(mark->has_value());
}

TEST_CASE(
    "a clean-closed store holding fewer records than its mark is refused") {
  testing::ScratchDir dir;
  { append_texts(*open_store(dir.path()).store, 1, 7); }  // marks 7
  // A store whose files hold 1..5 under that mark, as if RocksDB had
  // dropped the last two records with a damaged MANIFEST or WAL tail.
  testing::ScratchDir copy;
  {
    auto opened = open_store(copy.path());
    append_texts(*opened.store, 1, 5);
  }
  fs::copy_file(dir.path() / "PARLEY-CLEAN-CLOSE",
                copy.path() / "PARLEY-CLEAN-CLOSE",
                fs::copy_options::overwrite_existing);
  auto reopened = log::open_rocksdb_log_store(copy.path());
  REQUIRE_FALSE(reopened.has_value());
  CHECK(reopened.error().code == ErrorCode::kCorruption);
  CHECK_MESSAGE(reopened.error().message.find(
                    "closed cleanly at log sequence 7, but its files hold "
                    "records only up to 5: log sequences 6..7 are lost") !=
                    std::string::npos,
                reopened.error().message);
  auto viewed = log::open_rocksdb_log_store_read_only(copy.path());
  REQUIRE_FALSE(viewed.has_value());
  CHECK(viewed.error().message.find("log sequences 6..7 are lost") !=
        std::string::npos);
}

// The MANIFEST the store in `dir` uses (CURRENT names it).
fs::path current_manifest(const fs::path& dir) {
  std::ifstream current(dir / "CURRENT");
  std::string name;
  REQUIRE(std::getline(current, name));
  return dir / name;
}

TEST_CASE("a MANIFEST cut short after a clean close is refused by every open") {
  testing::ScratchDir dir;
  { append_texts(*open_store(dir.path()).store, 1, 10); }
  { append_texts(*open_store(dir.path()).store, 11, 12); }
  const fs::path manifest = current_manifest(dir.path());
  fs::resize_file(manifest, fs::file_size(manifest) - 3);
  auto reopened = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(reopened.has_value());
  CHECK(reopened.error().code == ErrorCode::kCorruption);
  CHECK_MESSAGE(
      reopened.error().message.find(manifest.filename().string() +
                                    " is damaged at byte") != std::string::npos,
      reopened.error().message);
  CHECK(reopened.error().message.find(
            "short of the " + std::to_string(fs::file_size(manifest) + 3) +
            " bytes it held when the store was closed cleanly") !=
        std::string::npos);
  // The read-only view (a RocksDB secondary) and the audit's WAL check
  // refuse it too, instead of waiting for the rest of the record.
  auto viewed = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE_FALSE(viewed.has_value());
  CHECK(viewed.error().message.find("is damaged at byte") != std::string::npos);
  auto torn = log::find_torn_wal_tail(dir.path());
  REQUIRE_FALSE(torn.has_value());
  CHECK(torn.error().message.find("is damaged at byte") != std::string::npos);
}

// Appends to `manifest` the start of a record that announces more bytes
// than follow, as a crash mid-write leaves it.
void tear_onto(const fs::path& manifest) {
  std::ofstream file(manifest, std::ios::binary | std::ios::app);
  const char header[7] = {0x12, 0x34, 0x56, 0x78, 0x6e, 0x01, 0x01};  // 366
  file.write(header, sizeof header);
  file << std::string(297, 'x');
}

TEST_CASE(
    "an open cut short after a clean close tears the MANIFEST past what the "
    "close left, and the store opens") {
  testing::ScratchDir dir;
  { append_texts(*open_store(dir.path()).store, 1, 10); }
  // What RocksDB appends while the store opens (a flush's or compaction's
  // entry), cut short by a crash before the open removed the mark.
  tear_onto(current_manifest(dir.path()));
  CHECK(fs::exists(dir.path() / "PARLEY-CLEAN-CLOSE"));
  auto viewed = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE_MESSAGE(viewed.has_value(), testing::error_message(viewed));
  viewed->reset();
  auto torn = log::find_torn_wal_tail(dir.path());
  REQUIRE_MESSAGE(torn.has_value(), testing::error_message(torn));
  auto reopened = open_store(dir.path());
  CHECK(all_texts(*reopened.store).size() == 10);
}

TEST_CASE(
    "an open cut short after a clean close tears the new MANIFEST it moved "
    "to, and the store opens") {
  testing::ScratchDir dir;
  { append_texts(*open_store(dir.path()).store, 1, 10); }
  const fs::path mark = dir.path() / "PARLEY-CLEAN-CLOSE";
  std::string saved_mark;
  REQUIRE(std::getline(std::ifstream(mark), saved_mark));
  const fs::path closed_manifest = current_manifest(dir.path());
  { auto opened = open_store(dir.path()); }
  // The open began a new MANIFEST, named it in CURRENT, and a crash tore
  // the version edit it was appending, the mark still in place.
  const fs::path manifest = current_manifest(dir.path());
  REQUIRE(manifest != closed_manifest);
  tear_onto(manifest);
  std::ofstream(mark) << saved_mark << '\n';
  auto reopened = open_store(dir.path());
  CHECK(all_texts(*reopened.store).size() == 10);
}

TEST_CASE(
    "a mark from before marks named the MANIFEST holds every byte of it to "
    "be whole") {
  testing::ScratchDir dir;
  { append_texts(*open_store(dir.path()).store, 1, 10); }
  const std::string text = "parley clean close: last log sequence 10";
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(schema::xxh3_64(text)));
  std::ofstream(dir.path() / "PARLEY-CLEAN-CLOSE")
      << text << ", xxh3 " << hash << '\n';
  tear_onto(current_manifest(dir.path()));
  auto reopened = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(reopened.has_value());
  CHECK(reopened.error().code == ErrorCode::kCorruption);
  CHECK_MESSAGE(reopened.error().message.find(
                    "ends with an incomplete record (366 bytes announced, "
                    "297 there)") != std::string::npos,
                reopened.error().message);
}

TEST_CASE("a MANIFEST record failing its checksum is refused naming the byte") {
  testing::ScratchDir dir;
  { append_texts(*open_store(dir.path()).store, 1, 10); }
  const fs::path manifest = current_manifest(dir.path());
  {
    std::fstream file(manifest,
                      std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(20);  // inside the first record's payload
    char byte = 0;
    file.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x10);
    file.seekp(20);
    file.write(&byte, 1);
  }
  testing::forget_clean_close(dir.path());  // damage, not a torn tail
  auto reopened = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(reopened.has_value());
  CHECK(reopened.error().code == ErrorCode::kCorruption);
  CHECK_MESSAGE(reopened.error().message.find(
                    "is damaged at byte 0: a record fails its checksum") !=
                    std::string::npos,
                reopened.error().message);
  auto viewed = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE_FALSE(viewed.has_value());
  CHECK(viewed.error().code == ErrorCode::kCorruption);
}

TEST_CASE(
    "a stored record failing verification is corruption at its sequence") {
  testing::ScratchDir dir;
  std::string record;
  {
    auto opened = open_store(dir.path());
    append_texts(*opened.store, 1, 5);
    opened.store->read(3, 3, [&](auto, std::string_view bytes) {
      record = bytes;
      return true;
    });
  }
  record[record.size() / 2] ^= 0x7f;
  record.resize(record.size() - 9);
  RawStore(dir.path()).put(1, log::rocksdb_layout::encode_be64(3), record);

  auto reopened = open_store(dir.path());
  std::vector<std::uint64_t> visited;
  auto read = reopened.store->read(1, kLastSequence, [&](auto sequence, auto) {
    visited.push_back(sequence);
    return true;
  });
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().code == ErrorCode::kCorruption);
  CHECK(read.error().message.starts_with("log sequence 3:"));
  CHECK(visited == std::vector<std::uint64_t>{1, 2});
  auto by_channel = reopened.store->read_channel(
      "c1", 1, kLastSequence, [](auto, auto, auto) { return true; });
  REQUIRE_FALSE(by_channel.has_value());
  CHECK(by_channel.error().message.starts_with("log sequence 3:"));
}

TEST_CASE("a stored record whose checksum fails names its log sequence") {
  testing::ScratchDir dir;
  std::string record;
  {
    auto opened = open_store(dir.path());
    append_texts(*opened.store, 1, 5);
    opened.store->read(4, 4, [&](auto, std::string_view bytes) {
      record = bytes;
      return true;
    });
  }
  // A digit of created_at, 2026 -> 2027: the FlatBuffer stays valid, only
  // the checksum tells.
  const std::size_t year = record.find("2026-01-01T");
  REQUIRE(year != std::string::npos);
  record[year + 3] = '7';
  RawStore(dir.path()).put(1, log::rocksdb_layout::encode_be64(4), record);

  auto reopened = open_store(dir.path());
  auto read =
      reopened.store->read(1, kLastSequence, [](auto, auto) { return true; });
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().code == ErrorCode::kCorruption);
  CHECK_MESSAGE(read.error().message.starts_with(
                    "log sequence 4: checksum mismatch (stored 0x"),
                read.error().message);
  auto by_channel = reopened.store->read_channel(
      "c1", 4, 4, [](auto, auto, auto) { return true; });
  REQUIRE_FALSE(by_channel.has_value());
  CHECK(by_channel.error().message.starts_with(
      "log sequence 4: checksum mismatch"));
}

// The table files of the store in `dir`.
std::vector<fs::path> table_files(const fs::path& dir) {
  std::vector<fs::path> tables;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".sst") tables.push_back(entry.path());
  }
  std::ranges::sort(tables);
  return tables;
}

// The offset of a table file's metaindex block, from its footer.
std::uint64_t metaindex_offset(const fs::path& table) {
  std::ifstream file(table, std::ios::binary);
  file.seekg(-53, std::ios::end);
  char footer[53];
  REQUIRE(file.read(footer, sizeof footer));
  std::uint64_t offset = 0;
  int shift = 0;
  for (std::size_t at = 1; at < sizeof footer; ++at, shift += 7) {
    const auto byte = static_cast<std::uint8_t>(footer[at]);
    offset |= std::uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) break;
  }
  return offset;
}

TEST_CASE(
    "a damaged table properties block is refused naming the file and no "
    "crash") {
  testing::ScratchDir dir;
  { append_texts(*open_store(dir.path()).store, 1, 20); }
  { open_store(dir.path()); }  // recovery moves the WAL into table files
  const std::vector<fs::path> tables = table_files(dir.path());
  REQUIRE_FALSE(tables.empty());
  // The properties block comes right before the metaindex block and its
  // 5-byte trailer; its last 4 bytes hold its restart count, whose top
  // bit says "hash index": RocksDB 7.8 parses that before checking the
  // block and asserts.
  const fs::path table = tables.front();
  const std::uint64_t at = metaindex_offset(table) - 5 - 1;
  {
    std::fstream file(table, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(static_cast<std::streamoff>(at));
    char byte = 0;
    file.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x80);
    file.seekp(static_cast<std::streamoff>(at));
    file.write(&byte, 1);
  }
  const std::string name = table.filename().string();
  auto reopened = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(reopened.has_value());
  CHECK(reopened.error().code == ErrorCode::kCorruption);
  CHECK_MESSAGE(reopened.error().message.find(
                    "the table file " + name +
                    " is damaged: its properties block fails its checksum") !=
                    std::string::npos,
                reopened.error().message);
  auto viewed = log::open_rocksdb_log_store_read_only(dir.path());
  REQUIRE_FALSE(viewed.has_value());
  CHECK(viewed.error().message.find(name) != std::string::npos);
  auto torn = log::find_torn_wal_tail(dir.path());
  REQUIRE_FALSE(torn.has_value());
  CHECK(torn.error().message.find(name) != std::string::npos);
}

TEST_CASE("a store of a newer format version is refused") {
  testing::ScratchDir dir;
  { open_store(dir.path()); }
  RawStore(dir.path()).put(4, "format_version", "5");
  auto reopened = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(reopened.has_value());
  CHECK(reopened.error().code == ErrorCode::kVersionMismatch);
  CHECK(reopened.error().message ==
        "store format version 5, this build reads versions 1 to 4");
}

// A record as schemas 1 and 2 wrote it, without a checksum field.
std::string record_without_checksum(std::uint16_t schema_version,
                                    std::uint64_t log_sequence) {
  flatbuffers::FlatBufferBuilder builder;
  builder.ForceDefaults(true);
  auto body =
      schema::CreateAgentUnregistered(builder, builder.CreateString("a1"));
  schema::RecordBuilder root(builder);
  root.add_schema_version(schema_version);
  root.add_log_sequence(log_sequence);
  root.add_channel_sequence(0);
  root.add_body_type(schema::Body::AgentUnregistered);
  root.add_body(body.Union());
  schema::FinishRecordBuffer(builder, root.Finish());
  return std::string(reinterpret_cast<const char*>(builder.GetBufferPointer()),
                     builder.GetSize());
}

TEST_CASE(
    "stores of formats 1 and 2 are read with their unchecksummed records "
    "and marked 4 when opened to write") {
  for (std::uint16_t version : {1, 2}) {
    CAPTURE(version);
    const std::string format = std::to_string(version);
    testing::ScratchDir dir;
    { append_texts(*open_store(dir.path()).store, 1, 1); }
    {
      RawStore raw(dir.path());
      raw.put(4, "format_version", format);
      raw.put(1, log::rocksdb_layout::encode_be64(2),
              record_without_checksum(version, 2));
    }
    {
      auto viewed = log::open_rocksdb_log_store_read_only(dir.path());
      REQUIRE_MESSAGE(viewed.has_value(), testing::error_message(viewed));
      CHECK((*viewed)->last_sequence() == 2);
      CHECK((*viewed)->read(1, kLastSequence, [](auto, auto) { return true; }));
    }
    CHECK(RawStore(dir.path()).get(4, "format_version") == format);
    {
      auto opened = open_store(dir.path());
      CHECK(opened.store->last_sequence() == 2);
      append_texts(*opened.store, 3, 3);
      std::vector<std::uint64_t> read;
      CHECK(opened.store->read(1, kLastSequence, [&](auto sequence, auto) {
        read.push_back(sequence);
        return true;
      }));
      CHECK(read == std::vector<std::uint64_t>{1, 2, 3});
    }
    CHECK(RawStore(dir.path()).get(4, "format_version") == "4");
  }
}

TEST_CASE("a RocksDB database that is not a Parley store is refused") {
  testing::ScratchDir dir;
  {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    REQUIRE(rocksdb::DB::Open(options, dir.path().string(), &db).ok());
    REQUIRE(db->Put(rocksdb::WriteOptions(), "someone", "else's").ok());
    delete db;
  }
  auto opened = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().code == ErrorCode::kCorruption);
  CHECK(opened.error().message.find("not a Parley store") != std::string::npos);
}

// What a crash leaves when it kills the creation of a store after RocksDB
// made the database exist and before Parley's families were all added.
void make_store_cut_short(const fs::path& dir,
                          const std::vector<std::string>& families) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& family : families) descriptors.emplace_back(family, options);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  REQUIRE(rocksdb::DB::Open(options, dir.string(), descriptors, &handles, &db)
              .ok());
  for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
  delete db;
}

TEST_CASE("a store whose creation a crash cut short opens, completed") {
  for (const auto& families : std::vector<std::vector<std::string>>{
           {"default"}, {"default", "log", "channel_index"}}) {
    testing::ScratchDir dir;
    make_store_cut_short(dir.path(), families);
    auto read_only = log::open_rocksdb_log_store_read_only(dir.path());
    REQUIRE_FALSE(read_only.has_value());
    CHECK(read_only.error().code == ErrorCode::kNotFound);
    {
      auto opened = open_store(dir.path());
      CHECK(opened.recovery.created);
      append_texts(*opened.store, 1, 2);
    }
    auto reopened = open_store(dir.path());
    CHECK_FALSE(reopened.recovery.created);
    CHECK(all_texts(*reopened.store) == numbers(1, 2));
  }
}

TEST_CASE("a cut-short store whose families hold data is not completed") {
  testing::ScratchDir dir;
  make_store_cut_short(dir.path(), {"default", "log"});
  {
    rocksdb::DB* db = nullptr;
    rocksdb::Options options;
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors{
        {"default", options}, {"log", options}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    REQUIRE(rocksdb::DB::Open(options, dir.path().string(), descriptors,
                              &handles, &db)
                .ok());
    REQUIRE(db->Put(rocksdb::WriteOptions(), handles[1], "k", "v").ok());
    for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
    delete db;
  }
  auto opened = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().message.find("not a Parley store") != std::string::npos);
}

// In a child process, whether some process holds `directory`'s LOCK (the
// child holds none of its parent's POSIX locks).
bool locked_seen_from_another_process(const fs::path& directory) {
  const pid_t child = ::fork();
  if (child == 0) {
    const int fd = ::open((directory / "LOCK").c_str(), O_RDONLY);
    struct flock probe {};
    probe.l_type = F_WRLCK;
    probe.l_whence = SEEK_SET;
    const bool locked = fd >= 0 && ::fcntl(fd, F_OFD_GETLK, &probe) == 0 &&
                        probe.l_type != F_UNLCK;
    ::_exit(locked ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST_CASE(
    "a refused second open in the same process keeps the first one's lock") {
  testing::ScratchDir dir;
  auto first = open_store(dir.path());
  CHECK(log::store_is_locked(dir.path()));
  auto second = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().code == ErrorCode::kBusy);
  CHECK(locked_seen_from_another_process(dir.path()));
  REQUIRE(first.store->close());
  CHECK_FALSE(log::store_is_locked(dir.path()));
}

TEST_CASE("opening a missing store without create_if_missing is not found") {
  testing::ScratchDir dir;
  auto opened = log::open_rocksdb_log_store(dir.path() / "absent",
                                            {.create_if_missing = false});
  REQUIRE_FALSE(opened.has_value());
  CHECK(opened.error().code == ErrorCode::kNotFound);
  CHECK_FALSE(fs::exists(dir.path() / "absent"));
}

TEST_CASE("a store already open elsewhere is busy") {
  testing::ScratchDir dir;
  auto first = open_store(dir.path());
  auto second = log::open_rocksdb_log_store(dir.path());
  REQUIRE_FALSE(second.has_value());
  CHECK_MESSAGE(second.error().code == ErrorCode::kBusy,
                second.error().message);
}

TEST_CASE("a deferred batch is neither acked nor readable until a flush") {
  testing::ScratchDir dir;
  auto opened = open_store(dir.path());
  std::atomic<int> told = 0;
  std::vector<log::AppendEntry> batch{text_entry("c1", "1")};
  REQUIRE(opened.store->append_deferred(
      batch, [&](log::Result<void> outcome) { told += outcome ? 1 : 100; }));
  CHECK(batch[0].position.log_sequence == 1);
  CHECK(told == 0);
  CHECK(opened.store->last_sequence() == 0);
  CHECK(all_texts(*opened.store).empty());
  REQUIRE(opened.store->flush());
  CHECK(told == 1);
  CHECK(opened.store->last_sequence() == 1);
  CHECK(all_texts(*opened.store) == numbers(1, 1));
}

TEST_CASE("close writes the deferred batches nobody flushed") {
  testing::ScratchDir dir;
  std::atomic<int> told = 0;
  {
    auto opened = open_store(dir.path());
    std::vector<std::vector<log::AppendEntry>> batches;
    for (int i = 1; i <= 3; ++i) {
      batches.push_back({text_entry("c1", std::to_string(i))});
    }
    for (auto& batch : batches) {
      REQUIRE(opened.store->append_deferred(
          batch,
          [&](log::Result<void> outcome) { told += outcome ? 1 : 100; }));
    }
    REQUIRE(opened.store->close());
    CHECK(told == 3);
  }
  auto reopened = open_store(dir.path());
  CHECK(all_texts(*reopened.store) == numbers(1, 3));
}

// Counts WAL syncs, and fails every one once armed, as a dying disk would.
class FailingSyncFileSystem : public rocksdb::FileSystemWrapper {
 public:
  explicit FailingSyncFileSystem(const std::shared_ptr<FileSystem>& base)
      : FileSystemWrapper(base) {}
  const char* Name() const override { return "FailingSyncFileSystem"; }

  rocksdb::IOStatus NewWritableFile(
      const std::string& name, const rocksdb::FileOptions& options,
      std::unique_ptr<rocksdb::FSWritableFile>* file,
      rocksdb::IODebugContext* debug) override {
    rocksdb::IOStatus status =
        target()->NewWritableFile(name, options, file, debug);
    if (status.ok() && name.ends_with(".log")) {
      *file = std::make_unique<File>(std::move(*file), armed, syncs);
    }
    return status;
  }

  std::atomic<bool> armed = false;
  std::atomic<int> syncs = 0;

 private:
  class File : public rocksdb::FSWritableFileOwnerWrapper {
   public:
    File(std::unique_ptr<rocksdb::FSWritableFile> file,
         const std::atomic<bool>& armed, std::atomic<int>& syncs)
        : FSWritableFileOwnerWrapper(std::move(file)),
          armed_(armed),
          syncs_(syncs) {}
    rocksdb::IOStatus Sync(const rocksdb::IOOptions& options,
                           rocksdb::IODebugContext* debug) override {
      ++syncs_;
      if (armed_) return rocksdb::IOStatus::IOError("injected sync failure");
      return target()->Sync(options, debug);
    }
    rocksdb::IOStatus Fsync(const rocksdb::IOOptions& options,
                            rocksdb::IODebugContext* debug) override {
      ++syncs_;
      if (armed_) return rocksdb::IOStatus::IOError("injected sync failure");
      return target()->Fsync(options, debug);
    }

   private:
    const std::atomic<bool>& armed_;
    std::atomic<int>& syncs_;
  };
};

// A scratch directory whose stores open through a FailingSyncFileSystem.
// Stores opened from it must be gone before it is.
struct FaultyDisk {
  testing::ScratchDir dir;
  std::shared_ptr<FailingSyncFileSystem> file_system =
      std::make_shared<FailingSyncFileSystem>(rocksdb::FileSystem::Default());
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(file_system);

  log::OpenedLogStore open() {
    return open_store(dir.path(), {.env = env.get()});
  }
};

// Runs `threads` appenders started together, each appending `appends`
// records to its own channel; returns every append's result.
std::vector<log::Result<std::vector<log::Position>>> append_concurrently(
    log::LogStore& store, int threads, int appends) {
  std::vector<log::Result<std::vector<log::Position>>> results(threads *
                                                               appends);
  std::latch start(threads);
  std::vector<std::jthread> appenders;
  for (int t = 0; t < threads; ++t) {
    appenders.emplace_back([&, t] {
      start.arrive_and_wait();
      for (int i = 0; i < appends; ++i) {
        std::vector<log::AppendEntry> batch{
            text_entry("c" + std::to_string(t), std::to_string(i))};
        results[t * appends + i] = store.append(batch);
      }
    });
  }
  appenders.clear();  // joins
  return results;
}

TEST_CASE(
    "a nearly full disk refuses appends with no_space and writes nothing") {
  testing::ScratchDir dir;
  {
    auto opened = open_store(dir.path());
    append_texts(*opened.store, 1, 3);
  }
  {
    // More free space than any disk has: the guard always trips.
    auto opened = log::open_rocksdb_log_store(
        dir.path(), {.min_free_bytes = std::uint64_t{1} << 62});
    REQUIRE(opened.has_value());
    std::vector<log::AppendEntry> batch{testing::text_entry("c", "4")};
    auto refused = opened->store->append(batch);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == log::ErrorCode::kNoSpace);
    CHECK(refused.error().message.find("no space") != std::string::npos);
    CHECK(opened->store->last_sequence() == 3);
  }
  auto reopened = open_store(dir.path());
  CHECK(all_texts(*reopened.store) == numbers(1, 3));
  append_texts(*reopened.store, 4, 4);
  CHECK(reopened.store->last_sequence() == 4);
}

TEST_CASE("a failed sync makes the store refuse every later append") {
  FaultyDisk disk;
  {
    auto opened = disk.open();
    append_texts(*opened.store, 1, 3);
    disk.file_system->armed = true;
    std::vector<log::AppendEntry> batch{text_entry("c1", "4")};
    auto failed = opened.store->append(batch);
    REQUIRE_FALSE(failed.has_value());
    CHECK(failed.error().code == ErrorCode::kIoError);
    CHECK(failed.error().message.find("injected sync failure") !=
          std::string::npos);
    disk.file_system->armed = false;
    std::vector<log::AppendEntry> later{text_entry("c1", "5")};
    auto refused = opened.store->append(later);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().code == ErrorCode::kFailed);
    CHECK(refused.error().message.find("refusing appends") !=
          std::string::npos);
    CHECK(opened.store->last_sequence() == 3);
  }
  auto reopened = open_store(disk.dir.path());
  std::vector<std::string> texts = all_texts(*reopened.store);
  // The failed record was never acked; it may or may not have reached disk.
  REQUIRE(texts.size() >= 3);
  CHECK(std::vector(texts.begin(), texts.begin() + 3) == numbers(1, 3));
  CHECK(texts.size() <= 4);
}

TEST_CASE("concurrent appenders share syncs: one sync acks a whole group") {
  FaultyDisk disk;
  auto opened = disk.open();
  const int syncs_before = disk.file_system->syncs;
  constexpr int kThreads = 16;
  constexpr int kAppends = 50;
  auto results = append_concurrently(*opened.store, kThreads, kAppends);
  for (const auto& result : results) {
    REQUIRE_MESSAGE(result.has_value(), testing::error_message(result));
  }
  CHECK(opened.store->last_sequence() == kThreads * kAppends);
  const int syncs = disk.file_system->syncs - syncs_before;
  MESSAGE((kThreads * kAppends) << " appends took " << syncs << " syncs");
  CHECK(syncs > 0);
  CHECK(syncs < kThreads * kAppends);
}

TEST_CASE("a failed sync fails every appender waiting behind it") {
  FaultyDisk disk;
  {
    auto opened = disk.open();
    append_texts(*opened.store, 1, 3);
    disk.file_system->armed = true;
    auto results = append_concurrently(*opened.store, 8, 20);
    for (const auto& result : results) {
      REQUIRE_FALSE(result.has_value());
      CHECK((result.error().code == ErrorCode::kIoError ||
             result.error().code == ErrorCode::kFailed));
    }
    CHECK(opened.store->last_sequence() == 3);
    disk.file_system->armed = false;
  }
  auto reopened = open_store(disk.dir.path());
  std::vector<std::string> texts = all_texts(*reopened.store);
  // Nothing after the failure was acked; what reached disk anyway is
  // whole records in sequence order.
  REQUIRE(texts.size() >= 3);
  CHECK(std::vector(texts.begin(), texts.begin() + 3) == numbers(1, 3));
}

TEST_CASE("a failed sync tells every deferred batch of its group") {
  FaultyDisk disk;
  auto opened = disk.open();
  append_texts(*opened.store, 1, 3);
  disk.file_system->armed = true;
  std::vector<std::vector<log::AppendEntry>> batches;
  for (int i = 4; i <= 8; ++i) {
    batches.push_back({text_entry("c1", std::to_string(i))});
  }
  std::vector<log::Result<void>> outcomes;
  for (auto& batch : batches) {
    REQUIRE(opened.store->append_deferred(batch, [&](log::Result<void> told) {
      outcomes.push_back(std::move(told));
    }));
  }
  auto flushed = opened.store->flush();
  REQUIRE_FALSE(flushed.has_value());
  CHECK(flushed.error().code == ErrorCode::kIoError);
  REQUIRE(outcomes.size() == batches.size());
  for (const auto& outcome : outcomes) {
    REQUIRE_FALSE(outcome.has_value());
    CHECK(outcome.error().code == ErrorCode::kIoError);
  }
  std::vector<log::AppendEntry> later{text_entry("c1", "9")};
  auto refused = opened.store->append_deferred(
      later, [&](log::Result<void>) { FAIL("a refused batch was told"); });
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().code == ErrorCode::kFailed);
  CHECK(opened.store->last_sequence() == 3);
  disk.file_system->armed = false;
}

}  // namespace
}  // namespace parley
