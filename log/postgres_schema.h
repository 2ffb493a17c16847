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
//   parley_writer          epoch bigint, lease_until            (one row)
//                          timestamptz
//
//   function parley_check_epoch(expected bigint): raises SQLSTATE PRLYF
//   unless parley_writer holds `expected`, and holds a share lock on the
//   row until the transaction ends, so no epoch bump commits meanwhile.
//
// The writer's lease: the writing hub keeps lease_until ahead of the
// database's clock (clock_timestamp()); a read-write open may take over a
// store whose lease lapsed (log/postgres_lease.h). Version 1 stores have
// no lease column; a writer migrates them to version 2 once it holds the
// writer's lock. Readers read both.
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

// The schema version this build writes, and the oldest it reads.
inline constexpr int kSchemaVersion = 2;
inline constexpr int kOldestReadableVersion = 1;

// The advisory lock the writing hub holds for as long as its writer
// connection lives: (kLockClass, hashtext(current_schema())).
inline constexpr int kLockClass = 0x50524c59;  // "PRLY"

// The SQLSTATE parley_check_epoch raises for a fenced writer.
inline constexpr std::string_view kFencedState = "PRLYF";

struct SchemaState {
  bool created = false;  // there was none: this call created it
  int version = kSchemaVersion;
};

// Checks the store's schema version; creates the schema first when there
// is none and `create` is set. `where` names the store in messages.
// Fails with kNotFound (no store and !create), kVersionMismatch (a version
// this build cannot read; a newer one is refused with the advice to
// upgrade), kCorruption (the version table holds no single version) or
// kIoError.
Result<SchemaState> prepare_schema(const Connection& connection,
                                   const std::string& where, bool create);

// Brings a store of `version` (one prepare_schema() accepted) to
// kSchemaVersion, in one transaction. Call holding the writer's lock.
Result<void> migrate_schema(const Connection& connection, int version);

}  // namespace parley::log::postgres_backend
