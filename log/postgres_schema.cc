#include "log/postgres_schema.h"

namespace parley::log::postgres_backend {
namespace {

// Two creators racing serialise on an advisory lock of their own (not the
// writer's, which a live hub holds for its lifetime).
std::string create_schema_sql() {
  return "BEGIN; SELECT pg_advisory_xact_lock(" +
         std::to_string(kLockClass + 1) + ", hashtext(current_schema()));" +
         R"sql(
CREATE TABLE IF NOT EXISTS parley_log (
  log_sequence bigint PRIMARY KEY,
  record bytea NOT NULL);
CREATE TABLE IF NOT EXISTS parley_channel_index (
  channel bytea NOT NULL,
  channel_sequence bigint NOT NULL,
  log_sequence bigint NOT NULL,
  PRIMARY KEY (channel, channel_sequence));
CREATE TABLE IF NOT EXISTS parley_idempotency (
  key bytea PRIMARY KEY,
  log_sequence bigint NOT NULL);
CREATE TABLE IF NOT EXISTS parley_writer (
  epoch bigint NOT NULL,
  lease_until timestamptz NOT NULL DEFAULT '-infinity');
INSERT INTO parley_writer (epoch)
  SELECT 0 WHERE NOT EXISTS (SELECT FROM parley_writer);
CREATE OR REPLACE FUNCTION parley_check_epoch(expected bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  current_epoch bigint;
BEGIN
  SELECT epoch INTO current_epoch FROM parley_writer FOR SHARE;
  IF current_epoch IS DISTINCT FROM expected THEN
    RAISE EXCEPTION 'this writer holds epoch %, the store is at epoch %',
      expected, current_epoch USING ERRCODE = 'PRLYF';
  END IF;
END
$fn$;
CREATE TABLE IF NOT EXISTS parley_schema_version (version integer NOT NULL);
INSERT INTO parley_schema_version
  SELECT 2 WHERE NOT EXISTS (SELECT FROM parley_schema_version);
COMMIT;
)sql";
}

// Version 1 had no lease: its writer row gains one, lapsed (a version 1
// writer never renewed one).
constexpr const char* kMigrateFrom1 = R"sql(
BEGIN;
ALTER TABLE parley_writer
  ADD COLUMN lease_until timestamptz NOT NULL DEFAULT '-infinity';
UPDATE parley_schema_version SET version = 2;
COMMIT;
)sql";

static_assert(kSchemaVersion == 2,
              "create_schema_sql() writes version 2, kMigrateFrom1 reaches it");

// Runs `script` (BEGIN; …; COMMIT;): on failure its transaction is
// rolled back and nothing of it stays.
Result<void> run_script(const Connection& connection, std::string_view what,
                        const char* script) {
  ResultPtr result(PQexec(connection.get(), script));
  if (!result || PQresultStatus(result.get()) != PGRES_COMMAND_OK) {
    Error error = result_error(connection, what, result.get());
    // A failed script leaves its transaction open.
    ResultPtr(PQexec(connection.get(), "ROLLBACK"));
    return std::unexpected(std::move(error));
  }
  return {};
}

Result<bool> schema_exists(const Connection& connection) {
  auto found = connection.exec(
      "looking for the Parley schema",
      "SELECT to_regclass('parley_schema_version') IS NOT NULL");
  if (!found) return std::unexpected(found.error());
  return PQntuples(found->get()) == 1 &&
         PQgetvalue(found->get(), 0, 0)[0] == 1;  // binary bool
}

}  // namespace

Result<SchemaState> prepare_schema(const Connection& connection,
                                   const std::string& where, bool create) {
  auto exists = schema_exists(connection);
  if (!exists) return std::unexpected(exists.error());
  bool created = false;
  if (!*exists) {
    if (!create) {
      return std::unexpected(
          Error{ErrorCode::kNotFound, "no Parley store in " + where});
    }
    if (auto made = run_script(connection, "creating the Parley schema",
                               create_schema_sql().c_str());
        !made) {
      return std::unexpected(made.error());
    }
    created = true;
  }
  auto versions =
      connection.exec("reading the schema version",
                      "SELECT version::bigint FROM parley_schema_version");
  if (!versions) return std::unexpected(versions.error());
  if (PQntuples(versions->get()) != 1) {
    return std::unexpected(
        Error{ErrorCode::kCorruption,
              where + ": parley_schema_version holds " +
                  std::to_string(PQntuples(versions->get())) +
                  " rows, not the one version row a Parley store has"});
  }
  const auto version = get_int8(versions->get(), 0, 0);
  if (!version) {
    return std::unexpected(
        Error{ErrorCode::kCorruption, where + ": the schema version is null"});
  }
  const auto signed_version = static_cast<std::int64_t>(*version);
  if (signed_version > kSchemaVersion) {
    return std::unexpected(Error{
        ErrorCode::kVersionMismatch,
        where + " holds a Parley store of schema version " +
            std::to_string(signed_version) + ", newer than this build knows (" +
            std::to_string(kSchemaVersion) +
            "); upgrade parley to open it. Nothing was changed"});
  }
  if (signed_version < kOldestReadableVersion) {
    return std::unexpected(Error{
        ErrorCode::kVersionMismatch,
        where + " holds a Parley store of schema version " +
            std::to_string(signed_version) + ", this build reads versions " +
            std::to_string(kOldestReadableVersion) + " to " +
            std::to_string(kSchemaVersion) + ". Nothing was changed"});
  }
  return SchemaState{.created = created,
                     .version = static_cast<int>(signed_version)};
}

Result<void> migrate_schema(const Connection& connection, int version) {
  if (version == kSchemaVersion) return {};
  return run_script(connection, "migrating the schema from version 1",
                    kMigrateFrom1);
}

}  // namespace parley::log::postgres_backend
