// Helpers for the suites labelled `postgres`: the test server CTest's
// `postgres` fixture starts (tests/postgres_server), and a fresh database
// on it per test.
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace parley::testing {

// The connection URI of the test server's `postgres` database, read from
// the file $PARLEY_TEST_POSTGRES names. Fails the test when it is unset:
// run the suite through ctest (ctest -L postgres), or start a server with
// `tests/postgres_server start FILE` and set PARLEY_TEST_POSTGRES=FILE.
std::string postgres_server_uri();

// `server_uri` pointing at database `name` instead.
std::string postgres_database_uri(std::string_view server_uri,
                                  std::string_view name);

// One connection of the test's own, for statements that must share a
// session (a lock held across calls).
class SqlSession {
 public:
  explicit SqlSession(std::string_view uri);
  SqlSession(const SqlSession&) = delete;
  SqlSession& operator=(const SqlSession&) = delete;
  ~SqlSession();
  // Runs `statement`; returns the first column of the first row as text
  // ("" when it returns no rows), or the error.
  std::expected<std::string, std::string> run(std::string_view statement);

 private:
  void* conn_;  // PGconn, kept out of this header
};

// SqlSession(uri).run(statement).
std::expected<std::string, std::string> run_sql(std::string_view uri,
                                                std::string_view statement);

// A database of its own on the test server, dropped (connections and all)
// when the object goes.
class ScratchDatabase {
 public:
  ScratchDatabase();
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;
  ~ScratchDatabase();
  const std::string& uri() const { return uri_; }
  const std::string& name() const { return name_; }

 private:
  std::string server_;
  std::string name_;
  std::string uri_;
};

}  // namespace parley::testing
