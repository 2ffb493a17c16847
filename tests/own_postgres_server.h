// A PostgreSQL server of the test's own, for tests that restart it or
// replicate it (the `postgres` fixture's server is shared by the tests
// running at the same time): tests/postgres_server (PARLEY_POSTGRES_SERVER)
// starts it, and stops it however the test ends.
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "tests/test_support.h"

namespace parley::testing {

struct OwnServer {
  ScratchDir dir;
  std::string state = (dir.path() / "server.uri").string();

  OwnServer() {
    auto started =
        run_command(std::string(PARLEY_POSTGRES_SERVER) + " start " + state);
    REQUIRE_MESSAGE(started.exit_code == 0, started.err);
  }
  OwnServer(const OwnServer&) = delete;
  OwnServer& operator=(const OwnServer&) = delete;
  ~OwnServer() {
    (void)run_command(std::string(PARLEY_POSTGRES_SERVER) + " stop " + state);
  }

  // The URI of its `postgres` database.
  std::string uri() const {
    std::ifstream in(state);
    std::string line;
    std::getline(in, line);
    return line;
  }
  // pg_ctl restart -m fast: every session is cut.
  CommandRun restart() const {
    return run_command(std::string(PARLEY_POSTGRES_SERVER) + " restart " +
                       state);
  }
  // SIGSTOP (SIGCONT) to every process of the server: it stops answering,
  // its sockets stay open and its kernel still acknowledges what is sent.
  CommandRun pause() const {
    return run_command(std::string(PARLEY_POSTGRES_SERVER) + " pause " + state);
  }
  CommandRun resume() const {
    return run_command(std::string(PARLEY_POSTGRES_SERVER) + " resume " +
                       state);
  }
};

}  // namespace parley::testing
