#include "engine/transport/process_memory.h"

#include <malloc.h>
#include <unistd.h>

#include <cstddef>
#include <fstream>

// jemalloc's control interface, bound only when jemalloc is linked in (a
// weak reference resolves to null otherwise).
extern "C" int mallctl(const char* name, void* old_value,
                       std::size_t* old_length, void* new_value,
                       std::size_t new_length) __attribute__((weak));

namespace parley::transport {
namespace {

std::optional<std::uint64_t> heap_bytes() {
  if (mallctl != nullptr) {
    // Statistics are cached until the epoch advances.
    std::uint64_t epoch = 1;
    std::size_t length = sizeof epoch;
    mallctl("epoch", &epoch, &length, &epoch, length);
    std::size_t allocated = 0;
    length = sizeof allocated;
    if (mallctl("stats.allocated", &allocated, &length, nullptr, 0) != 0) {
      return std::nullopt;
    }
    return allocated;
  }
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
}

std::optional<std::uint64_t> resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  if (!(statm >> size >> resident)) return std::nullopt;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

ProcessMemory process_memory() { return {heap_bytes(), resident_bytes()}; }

}  // namespace parley::transport
