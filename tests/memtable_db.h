// A RocksDB database whose default family uses the memtable a test is
// about, large enough that nothing is flushed unless the test asks: every
// read reads the memtable.
#pragma once

#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>

#include <filesystem>
#include <memory>

namespace parley::testing {

inline std::unique_ptr<rocksdb::DB> open_memtable_db(
    const std::filesystem::path& dir,
    std::shared_ptr<rocksdb::MemTableRepFactory> factory) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.memtable_factory = std::move(factory);
  options.write_buffer_size = 256 << 20;
  // As the log store: RocksDB inserts into a memtable from one thread.
  options.allow_concurrent_memtable_write = false;
  rocksdb::DB* db = nullptr;
  const rocksdb::Status status = rocksdb::DB::Open(options, dir, &db);
  REQUIRE_MESSAGE(status.ok(), status.ToString());
  return std::unique_ptr<rocksdb::DB>(db);
}

}  // namespace parley::testing
