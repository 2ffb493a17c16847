// log/crc32c.h: the CRC32C Parley computes, and that RocksDB's WAL and
// MANIFEST records reach in its place.
#include "log/crc32c.h"

#include <dlfcn.h>
#include <doctest/doctest.h>
#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "log/rocksdb_log_store.h"
#include "tests/test_support.h"

namespace rocksdb::crc32c {
std::uint32_t Extend(std::uint32_t crc, const char* buf, std::size_t size);
}

namespace parley {
namespace {

using log::crc32c_extend;
using log::crc32c_extend_portable;

#if defined(__x86_64__)
// librocksdb.so.7.8's rocksdb::crc32c::Extend.
constexpr const char* kRocksDbExtend = "_ZN7rocksdb6crc32c6ExtendEjPKcm";
using ExtendFunction = std::uint32_t (*)(std::uint32_t, const char*,
                                         std::size_t);

// Where librocksdb's own calls of `symbol` go: the GOT slot its PLT jumps
// through, bound by the dynamic linker (so, after a first call), or nullptr
// when librocksdb calls the symbol without its PLT or is not loaded.
void* rocksdb_plt_target(const char* symbol) {
  struct Search {
    const char* symbol;
    void* target = nullptr;
  } search{symbol};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& search = *static_cast<Search*>(data);
        if (std::strstr(info->dlpi_name, "librocksdb") == nullptr) return 0;
        // glibc relocates these entries of the loaded dynamic section in
        // place on x86-64; an entry still below the load address is not.
        auto address = [&](ElfW(Addr) entry) {
          return entry < info->dlpi_addr ? entry + info->dlpi_addr : entry;
        };
        const ElfW(Rela)* relocations = nullptr;
        std::size_t relocation_bytes = 0;
        const ElfW(Sym)* symbols = nullptr;
        const char* names = nullptr;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
          for (auto* entry = reinterpret_cast<const ElfW(Dyn)*>(
                   info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
               entry->d_tag != DT_NULL; ++entry) {
            if (entry->d_tag == DT_JMPREL) {
              relocations = reinterpret_cast<const ElfW(Rela)*>(
                  address(entry->d_un.d_ptr));
            } else if (entry->d_tag == DT_PLTRELSZ) {
              relocation_bytes = entry->d_un.d_val;
            } else if (entry->d_tag == DT_SYMTAB) {
              symbols = reinterpret_cast<const ElfW(Sym)*>(
                  address(entry->d_un.d_ptr));
            } else if (entry->d_tag == DT_STRTAB) {
              names = reinterpret_cast<const char*>(address(entry->d_un.d_ptr));
            }
          }
        }
        if (relocations == nullptr || symbols == nullptr || names == nullptr) {
          return 1;
        }
        for (std::size_t i = 0; i < relocation_bytes / sizeof(ElfW(Rela));
             ++i) {
          const ElfW(Rela)& relocation = relocations[i];
          if (ELF64_R_TYPE(relocation.r_info) != R_X86_64_JUMP_SLOT) continue;
          const ElfW(Sym)& named = symbols[ELF64_R_SYM(relocation.r_info)];
          if (std::strcmp(names + named.st_name, search.symbol) != 0) continue;
          std::memcpy(&search.target,
                      reinterpret_cast<const void*>(info->dlpi_addr +
                                                    relocation.r_offset),
                      sizeof search.target);
        }
        return 1;
      },
      &search);
  return search.target;
}
#endif

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

#if defined(__x86_64__)
TEST_CASE(
    "RocksDB's CRC32C calls reach Parley's, which computes what RocksDB's "
    "own computes") {
  // A WAL write, so that RocksDB has called Extend through its PLT.
  testing::ScratchDir dir;
  {
    auto opened = log::open_rocksdb_log_store(dir.path());
    REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
    std::vector<log::AppendEntry> batch{testing::text_entry("c", "hello")};
    REQUIRE(opened->store->append(batch).has_value());
    REQUIRE(opened->store->close().has_value());
  }
  CHECK(rocksdb_plt_target(kRocksDbExtend) ==
        reinterpret_cast<void*>(&rocksdb::crc32c::Extend));
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
#endif

}  // namespace
}  // namespace parley
