#include "log/postgres_connection.h"

#include <poll.h>

#include <array>
#include <cerrno>
#include <cstring>

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

Result<Connection> Connection::connect(
    const std::string& conninfo, bool read_only, std::stop_token give_up,
    std::optional<Clock::time_point> deadline) {
  const std::array<const char*, 4> keywords{
      "dbname", "fallback_application_name", "client_encoding", nullptr};
  const std::array<const char*, 4> values{conninfo.c_str(), "parley", "UTF8",
                                          nullptr};
  Connection connection;
  connection.give_up_ = std::move(give_up);
  connection.conn_.reset(PQconnectStartParams(keywords.data(), values.data(),
                                              /*expand_dbname=*/1));
  if (!connection.conn_) {
    return std::unexpected(Error{
        ErrorCode::kIoError, "cannot connect to PostgreSQL: out of memory"});
  }
  auto failed = [&](std::string why) {
    return std::unexpected(
        Error{ErrorCode::kIoError, "cannot connect to PostgreSQL: " + why});
  };
  if (PQstatus(connection.get()) == CONNECTION_BAD) {
    return failed(connection.error_message());
  }
  if (!deadline) deadline = Clock::now() + kConnectTimeout;
  // libpq's non-blocking connect: wait for what the last poll asked for,
  // starting as if it had asked to write.
  PostgresPollingStatusType polling = PGRES_POLLING_WRITING;
  while (polling != PGRES_POLLING_OK) {
    if (polling == PGRES_POLLING_FAILED) {
      return failed(connection.error_message());
    }
    auto ready = connection.wait_socket(
        polling == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline);
    if (!ready) return failed(ready.error().message);
    polling = PQconnectPoll(connection.get());
  }
  PQsetNoticeProcessor(connection.get(), ignore_notice, nullptr);
  if (read_only) {
    auto set = connection.exec("starting a read-only session",
                               "SET default_transaction_read_only = on");
    if (!set) return std::unexpected(set.error());
  }
  return connection;
}

Result<void> Connection::wait_socket(
    short events, std::optional<Clock::time_point> deadline) const {
  constexpr std::chrono::milliseconds kSlice{50};
  while (true) {
    if (give_up_.stop_requested()) {
      return std::unexpected(Error{
          ErrorCode::kIoError,
          "stopped waiting for PostgreSQL: the store gave up its writer"});
    }
    auto slice = kSlice;
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
          *deadline - Clock::now());
      if (left <= std::chrono::milliseconds(0)) {
        return std::unexpected(
            Error{ErrorCode::kIoError, "PostgreSQL did not answer in time"});
      }
      slice = std::min(slice, left);
    }
    pollfd socket{PQsocket(conn_.get()), events, 0};
    const int ready = ::poll(&socket, 1, static_cast<int>(slice.count()));
    // Ready, or the socket failed: the caller's next libpq call says which.
    if (ready > 0) return {};
    if (ready < 0 && errno != EINTR) {
      return std::unexpected(Error{
          ErrorCode::kIoError, std::string("waiting for PostgreSQL failed: ") +
                                   std::strerror(errno)});
    }
  }
}

Result<void> Connection::wait_for_result() const {
  while (true) {
    // A connection that failed (the server may have said why before it
    // closed it) makes PQgetResult() report that at once.
    if (PQconsumeInput(conn_.get()) != 1) return {};
    if (PQisBusy(conn_.get()) == 0) return {};
    if (auto ready = wait_socket(POLLIN, std::nullopt); !ready) return ready;
  }
}

Result<void> Connection::flush() const {
  while (true) {
    const int left = PQflush(conn_.get());
    if (left == 0) return {};
    if (left < 0) {
      return std::unexpected(
          Error{ErrorCode::kIoError,
                "sending to PostgreSQL failed (" + error_message() + ")"});
    }
    // The server may be waiting for its answers to be read before it
    // reads more.
    if (auto ready = wait_socket(POLLIN | POLLOUT, std::nullopt); !ready) {
      return ready;
    }
    if (PQconsumeInput(conn_.get()) != 1) {
      return std::unexpected(Error{
          ErrorCode::kIoError,
          "the connection to PostgreSQL was lost (" + error_message() + ")"});
    }
  }
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
  if (PQsendQueryParams(conn_.get(), sql.c_str(), arrays.count(),
                        arrays.types.data(), arrays.values.data(),
                        arrays.lengths.data(), arrays.formats.data(),
                        /*resultFormat=*/1) != 1) {
    return std::unexpected(result_error(*this, what, nullptr));
  }
  auto failed = [](const PGresult* result) {
    const ExecStatusType status = PQresultStatus(result);
    return status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK;
  };
  auto stopped = [&](const Error& error) {
    return std::unexpected(
        Error{error.code, std::string(what) + " failed: " + error.message});
  };
  if (auto sent = flush(); !sent) return stopped(sent.error());
  // As PQexecParams: the last result, unless one failed.
  ResultPtr result;
  while (true) {
    if (auto ready = wait_for_result(); !ready) return stopped(ready.error());
    ResultPtr next(PQgetResult(conn_.get()));
    if (!next) break;
    if (!result || !failed(result.get())) result = std::move(next);
  }
  if (!result || failed(result.get())) {
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
