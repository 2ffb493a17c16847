// The PostgreSQL LogStore: the log in a PostgreSQL database, for hubs whose
// history must outlive their machine. Same contract as the RocksDB backend
// (log/log_store.h); SQL layout: log/postgres_schema.h. This header
// includes no libpq, so it costs its includers nothing.
//
// Addressing: a libpq connection URI, `postgresql://[user@]host[:port]/db
// [?param=value…]` (log/store_location.h). The password comes from where
// libpq looks for one (PGPASSWORD, ~/.pgpass, the URI) and never appears
// in a message: messages name the store by redact_location().
//
// Durability: in Durability::kSync an append is acked only after
// PostgreSQL reported its transaction committed (durable as the server's
// synchronous_commit makes it: flushed to its WAL by default, and to a
// synchronous standby when one is configured). Durability::kAsync sets
// synchronous_commit = off for the writer: acked once the server has the
// transaction, which a server crash may lose. Appends that arrive while a
// transaction is in flight are group-committed: the next transaction
// carries all of them (one pipeline, one round trip).
//
// Failures: a transaction that fails (a lost connection, a server error)
// fails its group and the store, which refuses every later append with
// kFailed and never reconnects its writer: nothing of a failed transaction
// is in the log (PostgreSQL rolled it back), except when the connection
// was lost while COMMIT was in flight, where the group may or may not have
// committed and the error says so. Reopening reads the log as it is.
//
// One writer: a read-write store holds a session advisory lock on its
// writer connection for as long as it lives, and a lease it renews every
// third of lease_timeout (log/postgres_lease.h). A second read-write open
// of the same store fails with kBusy while that writer lives and renews;
// once the lease has lapsed (the writer paused, cut off, its machine
// gone) the open ends the old writer's session and takes the store over.
// Every open bumps the writer epoch, which every append transaction
// checks: a writer that was taken over from never writes again.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "log/log_store.h"

namespace parley::log {

struct PostgresOptions {
  Durability durability = Durability::kSync;
  bool create_if_missing = true;
  // How long the writer's lease lasts unrenewed: how long another open
  // waits for this writer once it has gone silent.
  std::chrono::milliseconds lease_timeout{3000};
  // How long an open waits for a live writer to let go before kBusy;
  // milliseconds::max(): until it does, or `stop` is requested (kBusy then
  // too). The wait polls the lock on one connection every 50 ms.
  std::chrono::milliseconds lock_patience{1000};
  std::stop_token stop;
  // Called once, from a thread of the store's own, when this writer has
  // lost the store: another writer fenced it, or its lease lapsed. From
  // then on every append fails with kFailed (the error passed).
  std::function<void(const Error&)> on_writer_lost;
};

struct OpenedPostgresStore {
  std::unique_ptr<LogStore> store;
  bool created = false;  // the schema did not exist and was created
  // Sessions of a writer whose lease had lapsed that this open ended.
  int lapsed_writers_ended = 0;
};

// Opens (or creates) the store in the database `conninfo` names; a store
// of schema version 1 is migrated to 2 (its writer row gains the lease).
// Fails with kNotFound (no store and !create_if_missing), kReadOnly (the
// server is a hot standby), kBusy (another writer holds it and renews its
// lease), kVersionMismatch (another schema
// version; a newer one is refused), kCorruption (the newest record fails
// its checks) or kIoError (no connection, a server error).
Result<OpenedPostgresStore> open_postgres_log_store(
    std::string_view conninfo, const PostgresOptions& options = {});

// Opens the store read-only, in read-only sessions, beside a live writer
// or on a hot standby: sees the log as it was when opened, and
// wait_for_append() catches up with what was committed since (polling
// every 50 ms), so a Tail on it follows a live hub. append() fails with
// kReadOnly. Creates and writes nothing. Fails as above, kNotFound when
// there is no store.
Result<std::unique_ptr<LogStore>> open_postgres_log_store_read_only(
    std::string_view conninfo);

// Removes the store in the database `conninfo` names, records and all (its
// tables and function, in one transaction); for benchmarks and tests that
// start from nothing. Fails with kBusy while a writer holds the store,
// kNotFound when there is none, kIoError.
Result<void> drop_postgres_log_store(std::string_view conninfo);

}  // namespace parley::log
