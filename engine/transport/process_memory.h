// What this process holds in memory, for /metrics: the heap bytes its
// allocator reports live (jemalloc's stats.allocated when jemalloc is the
// process's malloc, as in the `parley` binary; glibc's mallinfo2
// otherwise) and its resident set. RocksDB's memtables and block cache
// are heap allocations and count in the heap.
//
// Any thread.
#pragma once

#include <cstdint>
#include <optional>

namespace parley::transport {

struct ProcessMemory {
  std::optional<std::uint64_t> heap_bytes;
  std::optional<std::uint64_t> resident_bytes;
};

ProcessMemory process_memory();

}  // namespace parley::transport
