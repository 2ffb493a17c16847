#include "tests/postgres_test_support.h"

#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>

namespace parley::testing {

std::string postgres_server_uri() {
  const char* file = std::getenv("PARLEY_TEST_POSTGRES");
  if (file == nullptr) {
    FAIL(
        "PARLEY_TEST_POSTGRES is not set: run this suite through ctest "
        "(ctest -L postgres), or start a server with `tests/postgres_server "
        "start FILE` and set PARLEY_TEST_POSTGRES=FILE");
  }
  std::ifstream in(file);
  std::string uri;
  std::getline(in, uri);
  if (uri.empty()) FAIL("no server URI in " << file);
  return uri;
}

std::string postgres_database_uri(std::string_view server_uri,
                                  std::string_view name) {
  std::string uri(server_uri);
  const std::size_t slash = uri.find('/', uri.find("://") + 3);
  const std::size_t query = uri.find('?', slash);
  uri.replace(slash + 1,
              (query == std::string::npos ? uri.size() : query) - slash - 1,
              name);
  return uri;
}

SqlSession::SqlSession(std::string_view uri)
    : conn_(PQconnectdb(std::string(uri).c_str())) {}

SqlSession::~SqlSession() { PQfinish(static_cast<PGconn*>(conn_)); }

std::expected<std::string, std::string> SqlSession::run(
    std::string_view statement) {
  auto* conn = static_cast<PGconn*>(conn_);
  if (PQstatus(conn) != CONNECTION_OK) {
    return std::unexpected(PQerrorMessage(conn));
  }
  PGresult* result = PQexec(conn, std::string(statement).c_str());
  std::expected<std::string, std::string> out;
  const ExecStatusType status = PQresultStatus(result);
  if (status == PGRES_TUPLES_OK) {
    out = PQntuples(result) > 0 ? PQgetvalue(result, 0, 0) : "";
  } else if (status != PGRES_COMMAND_OK) {
    out = std::unexpected(PQresultErrorMessage(result));
  }
  PQclear(result);
  return out;
}

std::expected<std::string, std::string> run_sql(std::string_view uri,
                                                std::string_view statement) {
  return SqlSession(uri).run(statement);
}

ScratchDatabase::ScratchDatabase() : server_(postgres_server_uri()) {
  static std::atomic<int> counter = 0;
  name_ = "parley_test_" + std::to_string(getpid()) + "_" +
          std::to_string(counter++);
  auto created = run_sql(server_, "CREATE DATABASE " + name_);
  REQUIRE_MESSAGE(created.has_value(), created.error());
  uri_ = postgres_database_uri(server_, name_);
}

ScratchDatabase::~ScratchDatabase() {
  (void)run_sql(server_, "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
}

}  // namespace parley::testing
