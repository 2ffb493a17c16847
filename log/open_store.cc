#include "log/open_store.h"

#include "log/postgres_log_store.h"
#include "log/store_location.h"

namespace parley::log {

Result<OpenedLogStore> open_store(std::string_view location,
                                  const StoreOptions& options) {
  if (is_postgres_location(location)) {
    auto opened = open_postgres_log_store(
        location, {.durability = options.durability,
                   .create_if_missing = options.create_if_missing,
                   .lease_timeout = options.lease_timeout,
                   .lock_patience = options.lock_patience,
                   .stop = options.stop,
                   .on_writer_lost = options.on_writer_lost});
    if (!opened) return std::unexpected(opened.error());
    return OpenedLogStore{
        std::move(opened->store),
        RecoveryReport{.created = opened->created,
                       .lapsed_writers_ended = opened->lapsed_writers_ended}};
  }
  return open_rocksdb_log_store(std::filesystem::path(location),
                                {.durability = options.durability,
                                 .create_if_missing = options.create_if_missing,
                                 .write_buffer_size = options.memtable_bytes});
}

Result<std::unique_ptr<LogStore>> open_store_read_only(
    std::string_view location) {
  if (is_postgres_location(location)) {
    return open_postgres_log_store_read_only(location);
  }
  return open_rocksdb_log_store_read_only(std::filesystem::path(location));
}

}  // namespace parley::log
