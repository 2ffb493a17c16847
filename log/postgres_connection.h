// Internal to the PostgreSQL backend: one libpq connection, its results,
// and the binary encodings Parley sends and reads. The only header that
// includes libpq; only log/postgres_*.cc include it.
//
// Thread safety: a Connection is used by one thread at a time (libpq's
// rule); the store hands connections out from a pool (postgres_store.h).
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "log/error.h"

namespace parley::log::postgres_backend {

struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// One statement parameter, sent in binary format.
struct Param {
  Oid type = 0;  // 0: let the server infer it
  std::string bytes;
};

// Parameter type oids (src/include/catalog/pg_type.dat).
inline constexpr Oid kInt8Oid = 20;
inline constexpr Oid kByteaOid = 17;
inline constexpr Oid kInt8ArrayOid = 1016;
inline constexpr Oid kByteaArrayOid = 1001;

Param int8_param(std::uint64_t value);
Param bytea_param(std::string_view bytes);
// One-dimensional arrays in PostgreSQL's binary array format.
Param int8_array_param(std::span<const std::uint64_t> values);
Param bytea_array_param(std::span<const std::string_view> values);

// `params` as libpq's parallel arrays, every value in binary format;
// valid while `params` lives.
struct ParamArrays {
  explicit ParamArrays(std::span<const Param> params);
  int count() const { return static_cast<int>(types.size()); }
  std::vector<Oid> types;
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

// Every wait for the server (connecting, a result, sending) polls the
// socket in short slices and stops with kIoError once the connection's
// give-up token is requested: a store that lost its writer stops waiting
// on a server that no longer answers (one stopped, or cut off behind a
// socket that stays open), so the threads waiting can finish and the hub
// can stop. A connection that stopped waiting mid-query is never reused
// (its transaction status is not idle, or its owner drops it).
class Connection {
 public:
  using Clock = std::chrono::steady_clock;
  // How long connect() waits for a server by default.
  static constexpr std::chrono::seconds kConnectTimeout{10};

  Connection() = default;
  Connection(Connection&&) = default;
  Connection& operator=(Connection&&) = default;

  // Connects with `conninfo` (a connection URI; the password, if any, comes
  // from it, PGPASSWORD or ~/.pgpass as libpq looks it up). `read_only`
  // sessions refuse every write (they also work on a hot standby). Waits
  // until `deadline` (default: kConnectTimeout from now), or until
  // `give_up` is requested, which every later wait of the connection
  // heeds too.
  static Result<Connection> connect(
      const std::string& conninfo, bool read_only, std::stop_token give_up = {},
      std::optional<Clock::time_point> deadline = std::nullopt);

  bool ok() const { return conn_ && PQstatus(conn_.get()) == CONNECTION_OK; }
  PGconn* get() const { return conn_.get(); }
  // Later waits stop once `give_up` is requested (for a connection opened
  // before its owner's token existed).
  void give_up_on(std::stop_token give_up) { give_up_ = std::move(give_up); }

  // Runs `sql` with `params` and waits for its result; results come in
  // binary format. kIoError when the server reports an error or the
  // connection is lost (the message says which and names `what`), kConflict
  // on a unique violation.
  Result<ResultPtr> exec(std::string_view what, const std::string& sql,
                         std::span<const Param> params = {}) const;

  // Reads until PQgetResult() would not block (it reports a connection
  // that failed meanwhile).
  Result<void> wait_for_result() const;
  // Sends what libpq holds (a non-blocking connection's queued queries).
  Result<void> flush() const;

  // libpq's last error message, trimmed.
  std::string error_message() const;

 private:
  struct ConnDeleter {
    void operator()(PGconn* conn) const { PQfinish(conn); }
  };
  // Waits until the socket has `events`, the deadline passes or the
  // give-up token is requested (the last two fail).
  Result<void> wait_socket(short events,
                           std::optional<Clock::time_point> deadline) const;

  std::unique_ptr<PGconn, ConnDeleter> conn_;
  std::stop_token give_up_;
};

// The error of a failed `result` (nullptr: libpq had no result to give)
// on `connection`: `what` failed, and why.
Error result_error(const Connection& connection, std::string_view what,
                   const PGresult* result);

// Binary values of a result (format 1).
std::optional<std::uint64_t> get_int8(const PGresult* result, int row,
                                      int column);
std::string_view get_bytes(const PGresult* result, int row, int column);
inline bool is_null(const PGresult* result, int row, int column) {
  return PQgetisnull(result, row, column) != 0;
}

}  // namespace parley::log::postgres_backend
