// Opening a PostgreSQL store: connecting, creating or checking the schema,
// taking the writer's lock, and finding the last record.
#include <array>

#include "log/postgres_lease.h"
#include "log/postgres_schema.h"
#include "log/postgres_store.h"
#include "log/record_check.h"
#include "log/store_location.h"
#include "schemas/record.h"

namespace parley::log {
namespace {

using namespace postgres_backend;

// kReadOnly when `connection` is to a hot standby (a server replaying its
// primary's WAL), which refuses every write.
Result<void> refuse_standby(const Connection& connection,
                            const std::string& where) {
  auto recovering = connection.exec("asking whether the server is a standby",
                                    "SELECT pg_is_in_recovery()");
  if (!recovering) return std::unexpected(recovering.error());
  if (PQgetvalue(recovering->get(), 0, 0)[0] == 1) {  // binary bool
    return std::unexpected(
        Error{ErrorCode::kReadOnly,
              where + " is a read-only server (a hot standby replaying its "
                      "primary): a writer needs the primary. Nothing was "
                      "changed"});
  }
  return {};
}

}  // namespace

namespace postgres_backend {

Result<std::uint64_t> find_last_sequence(const Connection& connection) {
  auto found = connection.exec("reading the newest record",
                               "SELECT log_sequence, record FROM parley_log "
                               "ORDER BY log_sequence DESC LIMIT 1");
  if (!found) return std::unexpected(found.error());
  if (PQntuples(found->get()) == 0) return 0;
  const auto sequence = get_int8(found->get(), 0, 0);
  if (!sequence) {
    return std::unexpected(
        Error{ErrorCode::kCorruption, "the newest log sequence is malformed"});
  }
  std::vector<std::uint64_t> scratch;
  auto checked = check_record(
      schema::aligned_record(get_bytes(found->get(), 0, 1), scratch),
      *sequence);
  if (!checked) return std::unexpected(checked.error());
  return *sequence;
}

Result<void> start_writing(Connection& writer, Durability durability,
                           const std::string& where) {
  if (durability == Durability::kAsync) {
    auto set =
        writer.exec("setting the durability", "SET synchronous_commit = off");
    if (!set) return std::unexpected(set.error());
  }
  if (PQenterPipelineMode(writer.get()) != 1 ||
      PQsetnonblocking(writer.get(), 1) != 0) {
    return std::unexpected(
        Error{ErrorCode::kIoError, "cannot enter pipeline mode on " + where +
                                       ": " + writer.error_message()});
  }
  return {};
}

}  // namespace postgres_backend

Result<OpenedPostgresStore> open_postgres_log_store(
    std::string_view conninfo, const PostgresOptions& options) {
  const std::string where = redact_location(conninfo);
  auto writer = Connection::connect(std::string(conninfo), false, options.stop);
  if (!writer) return std::unexpected(writer.error());
  if (auto standby = refuse_standby(*writer, where); !standby) {
    return std::unexpected(standby.error());
  }
  auto schema = prepare_schema(*writer, where, options.create_if_missing);
  if (!schema) return std::unexpected(schema.error());
  auto locked = take_writer_lock(*writer, where,
                                 {.patience = options.lock_patience,
                                  .stop = options.stop,
                                  .end_lapsed_writer = schema->version >= 2});
  if (!locked) return std::unexpected(locked.error());
  if (auto migrated = migrate_schema(*writer, schema->version); !migrated) {
    return std::unexpected(migrated.error());
  }
  // Fences every writer before this one (their transactions check the
  // epoch they opened with) and starts this one's lease.
  const std::array lease{
      int8_param(static_cast<std::uint64_t>(options.lease_timeout.count()))};
  auto epoch =
      writer->exec("taking the writer's epoch",
                   "UPDATE parley_writer SET epoch = epoch + 1, lease_until = "
                   "clock_timestamp() + $1::bigint * interval '1 millisecond' "
                   "RETURNING epoch",
                   lease);
  if (!epoch) return std::unexpected(epoch.error());
  const auto writer_epoch = PQntuples(epoch->get()) == 1
                                ? get_int8(epoch->get(), 0, 0)
                                : std::nullopt;
  if (!writer_epoch) {
    return std::unexpected(
        Error{ErrorCode::kCorruption,
              where + ": parley_writer does not hold the one epoch row"});
  }
  auto last = find_last_sequence(*writer);
  if (!last) return std::unexpected(last.error());
  if (auto started = start_writing(*writer, options.durability, where);
      !started) {
    return std::unexpected(started.error());
  }
  return OpenedPostgresStore{
      std::make_unique<PostgresLogStore>(
          std::string(conninfo), where, std::move(*writer),
          /*read_only=*/false, *last, *writer_epoch, options),
      schema->created, *locked};
}

Result<void> drop_postgres_log_store(std::string_view conninfo) {
  const std::string where = redact_location(conninfo);
  auto connection = Connection::connect(std::string(conninfo), false);
  if (!connection) return std::unexpected(connection.error());
  if (auto exists = prepare_schema(*connection, where, /*create=*/false);
      !exists && exists.error().code == ErrorCode::kNotFound) {
    return std::unexpected(exists.error());
  }
  // Held until the connection closes: no writer opens it meanwhile.
  if (auto locked =
          take_writer_lock(*connection, where, {.end_lapsed_writer = false});
      !locked) {
    return std::unexpected(locked.error());
  }
  ResultPtr dropped(PQexec(connection->get(), R"sql(
BEGIN;
DROP TABLE IF EXISTS parley_log, parley_channel_index, parley_idempotency,
  parley_writer, parley_schema_version;
DROP FUNCTION IF EXISTS parley_check_epoch(bigint);
COMMIT;
)sql"));
  if (!dropped || PQresultStatus(dropped.get()) != PGRES_COMMAND_OK) {
    return std::unexpected(
        result_error(*connection, "dropping the store", dropped.get()));
  }
  return {};
}

Result<std::unique_ptr<LogStore>> open_postgres_log_store_read_only(
    std::string_view conninfo) {
  const std::string where = redact_location(conninfo);
  auto connection = Connection::connect(std::string(conninfo), true);
  if (!connection) return std::unexpected(connection.error());
  auto checked = prepare_schema(*connection, where, /*create=*/false);
  if (!checked) return std::unexpected(checked.error());
  auto last = find_last_sequence(*connection);
  if (!last) return std::unexpected(last.error());
  auto store = std::make_unique<PostgresLogStore>(
      std::string(conninfo), where, std::nullopt, /*read_only=*/true, *last,
      /*epoch=*/0);
  return store;
}

}  // namespace parley::log
