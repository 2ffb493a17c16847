// The crash campaign's PowerCutFileSystem (tests/crashtest/power_cut_fs.h):
// what a power cut does to files written through it.
#include "tests/crashtest/power_cut_fs.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "tests/test_support.h"

namespace parley {
namespace {

namespace fs = std::filesystem;
using crashtest::PowerCutFileSystem;

std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct Fixture {
  testing::ScratchDir dir;
  PowerCutFileSystem file_system;
  rocksdb::IOOptions io;
  std::mt19937_64 random{7};

  std::unique_ptr<rocksdb::FSWritableFile> create(const std::string& name) {
    std::unique_ptr<rocksdb::FSWritableFile> file;
    REQUIRE(
        file_system
            .NewWritableFile((dir.path() / name).string(), {}, &file, nullptr)
            .ok());
    return file;
  }
  void sync_directory() {
    std::unique_ptr<rocksdb::FSDirectory> directory;
    REQUIRE(
        file_system.NewDirectory(dir.path().string(), io, &directory, nullptr)
            .ok());
    REQUIRE(directory->Fsync(io, nullptr).ok());
  }
  // A cut that keeps nothing it need not: no unsynced byte, no unsynced
  // directory change.
  PowerCutFileSystem::Losses cut_losing_all_unsynced() {
    file_system.cut();
    return file_system.restore_power(
        [](const std::string&, std::uint64_t synced, std::uint64_t) {
          return synced;
        },
        [](const std::string&, std::size_t) { return std::size_t{0}; });
  }
};

TEST_CASE("a power cut keeps synced bytes and drops or tears the rest") {
  for (int round = 0; round < 20; ++round) {
    Fixture f;
    f.random.seed(static_cast<std::uint64_t>(round));
    auto file = f.create("000001.log");
    f.sync_directory();
    REQUIRE(file->Append("synced-", f.io, nullptr).ok());
    REQUIRE(file->Sync(f.io, nullptr).ok());
    REQUIRE(file->Append("unsynced", f.io, nullptr).ok());
    REQUIRE(file->Flush(f.io, nullptr).ok());
    f.file_system.cut();
    CHECK_FALSE(file->Append("after", f.io, nullptr).ok());
    CHECK_FALSE(file->Sync(f.io, nullptr).ok());
    (void)file->Close(f.io, nullptr);
    file.reset();
    const auto losses = f.file_system.restore_power(f.random);
    const std::string left = contents(f.dir.path() / "000001.log");
    CHECK(left.starts_with("synced-"));
    CHECK(left.size() < std::string("synced-unsynced").size());
    CHECK(std::string("synced-unsynced").starts_with(left));
    CHECK(losses.files_cut == 1);
  }
}

TEST_CASE("a file created after the last directory sync disappears") {
  Fixture f;
  auto file = f.create("000002.sst");
  REQUIRE(file->Append("data", f.io, nullptr).ok());
  REQUIRE(file->Sync(f.io, nullptr).ok());  // its bytes, not its entry
  REQUIRE(file->Close(f.io, nullptr).ok());
  CHECK(f.cut_losing_all_unsynced().files_removed == 1);
  CHECK_FALSE(fs::exists(f.dir.path() / "000002.sst"));
}

TEST_CASE("a synced file and directory survive the cut whole") {
  Fixture f;
  auto file = f.create("MANIFEST-000001");
  REQUIRE(file->Append("manifest", f.io, nullptr).ok());
  REQUIRE(file->Sync(f.io, nullptr).ok());
  REQUIRE(file->Close(f.io, nullptr).ok());
  f.sync_directory();
  f.file_system.cut();
  const auto losses = f.file_system.restore_power(f.random);
  CHECK(losses.files_removed == 0);
  CHECK(losses.bytes_dropped == 0);
  CHECK(contents(f.dir.path() / "MANIFEST-000001") == "manifest");
}

TEST_CASE("a rename not made durable is undone, the old target back") {
  Fixture f;
  { std::ofstream(f.dir.path() / "CURRENT") << "MANIFEST-000001\n"; }
  auto file = f.create("000003.dbtmp");
  REQUIRE(file->Append("MANIFEST-000005\n", f.io, nullptr).ok());
  REQUIRE(file->Sync(f.io, nullptr).ok());
  REQUIRE(file->Close(f.io, nullptr).ok());
  REQUIRE(f.file_system
              .RenameFile((f.dir.path() / "000003.dbtmp").string(),
                          (f.dir.path() / "CURRENT").string(), f.io, nullptr)
              .ok());
  CHECK(contents(f.dir.path() / "CURRENT") == "MANIFEST-000005\n");
  const auto losses = f.cut_losing_all_unsynced();
  CHECK(losses.renames_undone == 1);
  CHECK(contents(f.dir.path() / "CURRENT") == "MANIFEST-000001\n");
  CHECK_FALSE(fs::exists(f.dir.path() / "000003.dbtmp"));  // a new file too
}

TEST_CASE("a rename made durable by a directory sync stays") {
  Fixture f;
  { std::ofstream(f.dir.path() / "CURRENT") << "MANIFEST-000001\n"; }
  auto file = f.create("000003.dbtmp");
  REQUIRE(file->Append("MANIFEST-000005\n", f.io, nullptr).ok());
  REQUIRE(file->Sync(f.io, nullptr).ok());
  REQUIRE(file->Close(f.io, nullptr).ok());
  REQUIRE(f.file_system
              .RenameFile((f.dir.path() / "000003.dbtmp").string(),
                          (f.dir.path() / "CURRENT").string(), f.io, nullptr)
              .ok());
  f.sync_directory();
  f.file_system.cut();
  CHECK(f.file_system.restore_power(f.random).renames_undone == 0);
  CHECK(contents(f.dir.path() / "CURRENT") == "MANIFEST-000005\n");
}

TEST_CASE("a sync the power cut overtakes makes nothing durable") {
  Fixture f;
  auto file = f.create("000004.log");
  f.sync_directory();
  REQUIRE(file->Append("written", f.io, nullptr).ok());
  f.file_system.cut();
  CHECK_FALSE(file->Sync(f.io, nullptr).ok());
  file.reset();
  CHECK(f.cut_losing_all_unsynced().bytes_dropped ==
        std::string("written").size());
  CHECK(contents(f.dir.path() / "000004.log").empty());
}

TEST_CASE("a newer WAL written while an older one holds unsynced bytes cuts") {
  Fixture f;
  auto older = f.create("000004.log");
  REQUIRE(older->Append("older", f.io, nullptr).ok());
  auto newer = f.create("000007.log");
  f.file_system.cut_when_newer_wal_written(/*older_unsynced=*/true);
  REQUIRE(older->Sync(f.io, nullptr).ok());
  REQUIRE(newer->Append("first", f.io, nullptr).ok());
  CHECK_FALSE(f.file_system.down());  // the older one is synced
  REQUIRE(older->Append("more", f.io, nullptr).ok());
  CHECK_FALSE(f.file_system.down());  // appending to the older one
  REQUIRE(newer->Append("second", f.io, nullptr).ok());
  CHECK(f.file_system.down());  // right after that append
  CHECK_FALSE(newer->Append("third", f.io, nullptr).ok());
}

TEST_CASE("unsynced directory changes survive oldest first, or not at all") {
  for (int round = 0; round < 40; ++round) {
    CAPTURE(round);
    Fixture f;
    f.random.seed(static_cast<std::uint64_t>(round));
    { std::ofstream(f.dir.path() / "CURRENT") << "MANIFEST-000001\n"; }
    f.sync_directory();
    (void)f.create("000002.log");
    auto file = f.create("000003.dbtmp");
    REQUIRE(file->Append("MANIFEST-000005\n", f.io, nullptr).ok());
    REQUIRE(file->Sync(f.io, nullptr).ok());
    REQUIRE(file->Close(f.io, nullptr).ok());
    REQUIRE(f.file_system
                .RenameFile((f.dir.path() / "000003.dbtmp").string(),
                            (f.dir.path() / "CURRENT").string(), f.io, nullptr)
                .ok());
    (void)f.create("000006.log");
    f.file_system.cut();
    (void)f.file_system.restore_power(f.random);
    // Kept in order: 000002.log, 000003.dbtmp, the rename, 000006.log.
    const bool first = fs::exists(f.dir.path() / "000002.log");
    const bool second = fs::exists(f.dir.path() / "000003.dbtmp");
    const bool third =
        contents(f.dir.path() / "CURRENT") == "MANIFEST-000005\n";
    const bool fourth = fs::exists(f.dir.path() / "000006.log");
    CHECK((first || !second));
    CHECK((first || !third));
    CHECK_FALSE((second && third));  // the rename took it away
    CHECK((third || !fourth));
  }
}

TEST_CASE("a cut can keep what a test chooses, new directory entries too") {
  Fixture f;
  auto older = f.create("000004.log");
  auto newer = f.create("000007.log");
  REQUIRE(older->Append("older-tail", f.io, nullptr).ok());
  REQUIRE(newer->Append("newer", f.io, nullptr).ok());
  f.file_system.cut();
  older.reset();
  newer.reset();
  const auto losses = f.file_system.restore_power(
      [&](const std::string& name, std::uint64_t synced, std::uint64_t size) {
        return name.ends_with("000007.log") ? size : synced + 5;
      },
      [](const std::string&, std::size_t count) { return count; });
  CHECK(losses.files_removed == 0);
  CHECK(losses.files_cut == 1);
  CHECK(losses.files_torn == 1);
  CHECK(contents(f.dir.path() / "000004.log") == "older");
  CHECK(contents(f.dir.path() / "000007.log") == "newer");
}

TEST_CASE(
    "an armed fault fails the nth matching call, once or until disarmed") {
  using crashtest::IoFault;
  Fixture f;
  auto file = f.create("000004.log");
  f.file_system.faults().arm({.kind = IoFault::Kind::kNoSpace,
                              .ops = IoFault::kSync,
                              .nth = 2,
                              .sticky = true});
  REQUIRE(file->Append("one", f.io, nullptr).ok());  // not a sync
  CHECK(file->Sync(f.io, nullptr).ok());
  const rocksdb::IOStatus full = file->Sync(f.io, nullptr);
  CHECK(full.IsNoSpace());
  CHECK(full.ToString().find("injected ENOSPC on sync of") !=
        std::string::npos);
  CHECK(full.ToString().find("000004.log") != std::string::npos);
  CHECK(file->Fsync(f.io, nullptr).IsNoSpace());  // sticky
  CHECK(file->RangeSync(0, 3, f.io, nullptr).IsNoSpace());
  CHECK(file->Append("two", f.io, nullptr).ok());
  f.file_system.faults().disarm();
  CHECK(file->Sync(f.io, nullptr).ok());
  CHECK(f.file_system.faults().injected() == 3);

  // One EIO on the first read, then reads work again.
  f.file_system.faults().arm({.kind = IoFault::Kind::kIoError,
                              .ops = IoFault::kRead,
                              .sticky = false});
  std::unique_ptr<rocksdb::FSSequentialFile> reader;
  const std::string name = (f.dir.path() / "000004.log").string();
  const rocksdb::IOStatus open =
      f.file_system.NewSequentialFile(name, {}, &reader, nullptr);
  CHECK(open.IsIOError());
  CHECK_FALSE(open.IsNoSpace());
  CHECK(open.ToString().find("injected EIO on opening to read") !=
        std::string::npos);
  REQUIRE(f.file_system.NewSequentialFile(name, {}, &reader, nullptr).ok());
  char scratch[16];
  rocksdb::Slice read;
  REQUIRE(reader->Read(sizeof scratch, f.io, &read, scratch, nullptr).ok());
  CHECK(read.ToString() == "onetwo");

  // Creation: a new file and a rename fail without changing the directory.
  f.file_system.faults().arm(
      {.kind = IoFault::Kind::kIoError, .ops = IoFault::kCreate});
  std::unique_ptr<rocksdb::FSWritableFile> refused;
  CHECK_FALSE(f.file_system
                  .NewWritableFile((f.dir.path() / "000005.log").string(), {},
                                   &refused, nullptr)
                  .ok());
  CHECK_FALSE(fs::exists(f.dir.path() / "000005.log"));
  CHECK_FALSE(
      f.file_system
          .RenameFile(name, (f.dir.path() / "CURRENT").string(), f.io, nullptr)
          .ok());
  CHECK(fs::exists(name));
}

}  // namespace
}  // namespace parley
