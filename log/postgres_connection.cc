#include "log/postgres_connection.h"

#include <array>

namespace parley::log::postgres_backend {
namespace {

void put_be32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

void put_be64(std::string& out, std::uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

// The header of a one-dimensional array of `count` elements of `element`.
std::string array_header(Oid element, std::size_t count) {
  std::string out;
  put_be32(out, 1);  // dimensions
  put_be32(out, 0);  // no nulls
  put_be32(out, element);
  put_be32(out, static_cast<std::uint32_t>(count));
  put_be32(out, 1);  // lower bound
  return out;
}

// libpq prints server notices to stderr by default; Parley's output is
// its own.
void ignore_notice(void*, const char*) {}

std::string trimmed(std::string message) {
  while (!message.empty() &&
         (message.back() == '\n' || message.back() == ' ')) {
    message.pop_back();
  }
  return message;
}

}  // namespace

Param int8_param(std::uint64_t value) {
  Param param{kInt8Oid, {}};
  put_be64(param.bytes, value);
  return param;
}

Param bytea_param(std::string_view bytes) {
  return {kByteaOid, std::string(bytes)};
}

Param int8_array_param(std::span<const std::uint64_t> values) {
  Param param{kInt8ArrayOid, array_header(kInt8Oid, values.size())};
  param.bytes.reserve(param.bytes.size() + values.size() * 12);
  for (std::uint64_t value : values) {
    put_be32(param.bytes, 8);
    put_be64(param.bytes, value);
  }
  return param;
}

Param bytea_array_param(std::span<const std::string_view> values) {
  Param param{kByteaArrayOid, array_header(kByteaOid, values.size())};
  std::size_t size = param.bytes.size();
  for (std::string_view value : values) size += 4 + value.size();
  param.bytes.reserve(size);
  for (std::string_view value : values) {
    put_be32(param.bytes, static_cast<std::uint32_t>(value.size()));
    param.bytes.append(value);
  }
  return param;
}

Result<Connection> Connection::connect(const std::string& conninfo,
                                       bool read_only) {
  const std::array<const char*, 4> keywords{
      "dbname", "fallback_application_name", "client_encoding", nullptr};
  const std::array<const char*, 4> values{conninfo.c_str(), "parley", "UTF8",
                                          nullptr};
  Connection connection;
  connection.conn_.reset(
      PQconnectdbParams(keywords.data(), values.data(), /*expand_dbname=*/1));
  if (!connection.conn_) {
    return std::unexpected(Error{
        ErrorCode::kIoError, "cannot connect to PostgreSQL: out of memory"});
  }
  if (PQstatus(connection.get()) != CONNECTION_OK) {
    return std::unexpected(
        Error{ErrorCode::kIoError,
              "cannot connect to PostgreSQL: " + connection.error_message()});
  }
  PQsetNoticeProcessor(connection.get(), ignore_notice, nullptr);
  if (read_only) {
    auto set = connection.exec("starting a read-only session",
                               "SET default_transaction_read_only = on");
    if (!set) return std::unexpected(set.error());
  }
  return connection;
}

ParamArrays::ParamArrays(std::span<const Param> params) {
  for (const Param& param : params) {
    types.push_back(param.type);
    values.push_back(param.bytes.data());
    lengths.push_back(static_cast<int>(param.bytes.size()));
    formats.push_back(1);
  }
}

Result<ResultPtr> Connection::exec(std::string_view what,
                                   const std::string& sql,
                                   std::span<const Param> params) const {
  const ParamArrays arrays(params);
  ResultPtr result(PQexecParams(conn_.get(), sql.c_str(), arrays.count(),
                                arrays.types.data(), arrays.values.data(),
                                arrays.lengths.data(), arrays.formats.data(),
                                /*resultFormat=*/1));
  const ExecStatusType status =
      result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return std::unexpected(result_error(*this, what, result.get()));
  }
  return result;
}

std::string Connection::error_message() const {
  return trimmed(conn_ ? PQerrorMessage(conn_.get()) : "no connection");
}

Error result_error(const Connection& connection, std::string_view what,
                   const PGresult* result) {
  std::string why;
  if (!connection.ok()) {
    why = "the connection to PostgreSQL was lost (" +
          connection.error_message() + ")";
  } else if (result != nullptr) {
    why = trimmed(PQresultErrorMessage(result));
    if (const char* state = PQresultErrorField(result, PG_DIAG_SQLSTATE)) {
      why += std::string(" [SQLSTATE ") + state + "]";
    }
  } else {
    why = connection.error_message();
  }
  return Error{ErrorCode::kIoError, std::string(what) + " failed: " + why};
}

std::optional<std::uint64_t> get_int8(const PGresult* result, int row,
                                      int column) {
  if (PQgetisnull(result, row, column) ||
      PQgetlength(result, row, column) != 8) {
    return std::nullopt;
  }
  const char* bytes = PQgetvalue(result, row, column);
  std::uint64_t value = 0;
  for (int i = 0; i < 8; ++i) {
    value = value << 8 | static_cast<std::uint8_t>(bytes[i]);
  }
  return value;
}

std::string_view get_bytes(const PGresult* result, int row, int column) {
  return {PQgetvalue(result, row, column),
          static_cast<std::size_t>(PQgetlength(result, row, column))};
}

}  // namespace parley::log::postgres_backend
