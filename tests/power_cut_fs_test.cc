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
  f.file_system.cut();
  CHECK(f.file_system.restore_power(f.random).files_removed == 1);
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
  f.file_system.cut();
  const auto losses = f.file_system.restore_power(f.random);
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

}  // namespace
}  // namespace parley
