// log/crc32c.h: the CRC32C Parley computes, and that RocksDB's WAL and
// MANIFEST records reach in its place.
#include "log/crc32c.h"

#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>

namespace rocksdb::crc32c {
std::uint32_t Extend(std::uint32_t crc, const char* buf, std::size_t size);
}

namespace parley {
namespace {

using log::crc32c_extend;
using log::crc32c_extend_portable;

// librocksdb.so.7.8's rocksdb::crc32c::Extend.
constexpr const char* kRocksDbExtend = "_ZN7rocksdb6crc32c6ExtendEjPKcm";
using ExtendFunction = std::uint32_t (*)(std::uint32_t, const char*,
                                         std::size_t);

std::string random_bytes(std::size_t size, std::mt19937& random) {
  std::string bytes(size, '\0');
  for (char& byte : bytes) byte = static_cast<char>(random());
  return bytes;
}

TEST_CASE("CRC32C gives the standard check values") {
  // The catalogue's check value, and RFC 3720's (iSCSI) test vectors.
  std::string ascending(32, '\0');
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<char>(i);
  for (auto extend : {crc32c_extend, crc32c_extend_portable}) {
    CHECK(extend(0, "123456789") == 0xe3069283u);
    CHECK(extend(0, std::string(32, '\0')) == 0x8a9136aau);
    CHECK(extend(0, std::string(32, '\xff')) == 0x62a8ab43u);
    CHECK(extend(0, ascending) == 0x46dd794eu);
    CHECK(extend(0, "") == 0u);
  }
}

TEST_CASE(
    "the crc32 instruction and the table agree at every length and "
    "alignment, and extending piece by piece equals one pass") {
  MESSAGE("crc32 instruction in use: " << log::crc32c_uses_hardware());
  std::mt19937 random(20261202);
  const std::string bytes = random_bytes(4096 + 64, random);
  for (std::size_t offset = 0; offset < 8; ++offset) {
    for (std::size_t size = 0; size < 300; ++size) {
      const std::string_view piece(bytes.data() + offset, size);
      REQUIRE(crc32c_extend(0, piece) == crc32c_extend_portable(0, piece));
    }
  }
  const std::string_view all(bytes);
  const std::uint32_t whole = crc32c_extend(0, all);
  for (std::size_t cut : {1u, 7u, 8u, 13u, 1000u, 4095u}) {
    CHECK(crc32c_extend(crc32c_extend(0, all.substr(0, cut)),
                        all.substr(cut)) == whole);
  }
}

TEST_CASE(
    "RocksDB's CRC32C calls reach Parley's, which computes what RocksDB's "
    "own computes") {
  // The process resolves RocksDB's symbol to the definition linked in with
  // parley_log, which is the one librocksdb's own calls (through its PLT)
  // reach.
  CHECK(dlsym(RTLD_DEFAULT, kRocksDbExtend) ==
        reinterpret_cast<void*>(&rocksdb::crc32c::Extend));
  // The next definition in the search order is librocksdb's own.
  void* const next = dlsym(RTLD_NEXT, kRocksDbExtend);
  REQUIRE(next != nullptr);
  CHECK(next != reinterpret_cast<void*>(&rocksdb::crc32c::Extend));
  const auto rocksdb_own = reinterpret_cast<ExtendFunction>(next);
  std::mt19937 random(7);
  for (std::size_t size : {0u, 1u, 7u, 8u, 9u, 64u, 641u, 32768u, 100000u}) {
    const std::string bytes = random_bytes(size, random);
    const std::uint32_t seed = random();
    CHECK(rocksdb::crc32c::Extend(seed, bytes.data(), bytes.size()) ==
          rocksdb_own(seed, bytes.data(), bytes.size()));
  }
}

}  // namespace
}  // namespace parley
