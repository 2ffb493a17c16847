// Internal to the PostgreSQL backend: the SQL layout Parley creates and
// versions, in the first schema of the connection's search_path.
//
//   table                  columns                              key
//   ---------------------  -----------------------------------  -----------
//   parley_schema_version  version integer                      (one row)
//   parley_log             log_sequence bigint, record bytea    log_sequence
//   parley_channel_index   channel bytea, channel_sequence      (channel,
//                          bigint, log_sequence bigint           channel_seq)
//   parley_idempotency     key bytea, log_sequence bigint       key
//   parley_writer          epoch bigint                         (one row)
//
//   function parley_check_epoch(expected bigint): raises SQLSTATE PRLYF
//   unless parley_writer holds `expected`, and holds a share lock on the
//   row until the transaction ends, so no epoch bump commits meanwhile.
//
// Records are Record FlatBuffers, byte for byte as the RocksDB backend
// stores them. Channel ids and idempotency keys are bytea, so they compare
// as bytes whatever the database's collation. Sequences are bigint (a log
// reaches 2^63 long after anything else gives out).
//
// One group commit = one transaction holding every record of its batches
// and their index entries, so they become durable together or not at all.
// Its first statement is parley_check_epoch(the writer's epoch): a writer
// whose epoch was bumped since it opened the store (it was fenced) writes
// nothing, ever again.
// The schema is created in one transaction too, with the version row last:
// a store either has every table and its version, or nothing.
#pragma once

#include <string>
#include <string_view>

#include "log/postgres_connection.h"

namespace parley::log::postgres_backend {

// The schema version this build reads and writes.
inline constexpr int kSchemaVersion = 1;

// The advisory lock the writing hub holds for as long as its writer
// connection lives: (kLockClass, hashtext(current_schema())).
inline constexpr int kLockClass = 0x50524c59;  // "PRLY"

// The SQLSTATE parley_check_epoch raises for a fenced writer.
inline constexpr std::string_view kFencedState = "PRLYF";

// Checks the store's schema version; creates the schema first when there
// is none and `create` is set. `where` names the store in messages.
// Returns whether it created the schema. Fails with kNotFound (no store
// and !create), kVersionMismatch (another version; a newer one is refused
// with the advice to upgrade), kCorruption (the version table holds no
// single version) or kIoError.
Result<bool> prepare_schema(const Connection& connection,
                            const std::string& where, bool create);

}  // namespace parley::log::postgres_backend
