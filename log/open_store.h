// Opens the store a location names (log/store_location.h): a RocksDB
// directory or a PostgreSQL connection URI. The one place the tools and
// the server open stores, so every command takes either.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string_view>

#include "log/log_store.h"
#include "log/rocksdb_log_store.h"

namespace parley::log {

struct StoreOptions {
  Durability durability = Durability::kSync;
  bool create_if_missing = true;
  // RocksDB: bytes a memtable holds before it is flushed to a table file
  // (RocksDbOptions::write_buffer_size); 0: RocksDB's default, 64 MiB.
  // PostgreSQL has no memtables and ignores it.
  std::size_t memtable_bytes = 0;
  // PostgreSQL (PostgresOptions, log/postgres_log_store.h): the writer's
  // lease, how long (and until what) to wait for a live writer, and the
  // call made when this writer loses the store. A RocksDB store is held by a
  // file lock its process holds until it exits, and has none of them.
  std::chrono::milliseconds lease_timeout{3000};
  std::chrono::milliseconds lock_patience{1000};
  std::stop_token stop;
  std::function<void(const Error&)> on_writer_lost;
};

// Opens (or creates) the store at `location` read-write. `recovery` tells
// whether it was created and, for RocksDB, whether a torn WAL tail was
// dropped. Fails as open_rocksdb_log_store() or open_postgres_log_store()
// does.
Result<OpenedLogStore> open_store(std::string_view location,
                                  const StoreOptions& options = {});

// Opens the store at `location` read-only, beside a live writer: a RocksDB
// secondary instance, or read-only PostgreSQL sessions (which also work on
// a hot standby). Writes nothing; kNotFound when there is no store.
Result<std::unique_ptr<LogStore>> open_store_read_only(
    std::string_view location);

}  // namespace parley::log
