// tools/examples/: each example program completes its flow in both modes,
// in-process (no --url) and against a `parley serve` process (--url).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "tests/serve_fixture.h"

namespace {

using parley::testing::ScratchDir;
using parley::testing::ServeProcess;

struct Run {
  int exit_code;
  std::string output;
};

// Runs `command` with stdout and stderr captured.
Run run(const std::string& command, const ScratchDir& dir) {
  const auto out = dir.path() / "example.out";
  const int status =
      std::system((command + " > " + out.string() + " 2>&1").c_str());
  std::ifstream file(out);
  std::stringstream text;
  text << file.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

void check_qa_transcript(const Run& qa) {
  CHECK_MESSAGE(qa.exit_code == 0, qa.output);
  CHECK(qa.output.find("-> answerer-") != std::string::npos);
  CHECK(qa.output.find(": Can we ship the release this week?") !=
        std::string::npos);
  CHECK(qa.output.find(": Ship it on Thursday; the tests are green.") !=
        std::string::npos);
  CHECK(qa.output.find("\"reason\":\"consulting_complete\"") !=
        std::string::npos);
}

}  // namespace

TEST_SUITE("client") {
  TEST_CASE("the qa example completes on an in-process hub") {
    ScratchDir dir;
    check_qa_transcript(run(PARLEY_EXAMPLE_QA, dir));
  }

  TEST_CASE("the qa example completes against parley serve") {
    ScratchDir dir;
    ServeProcess serve(dir.path() / "store");
    check_qa_transcript(
        run(std::string(PARLEY_EXAMPLE_QA) + " --url " + serve.url(), dir));
    CHECK(serve.stop(SIGTERM) == 0);
  }

}  // TEST_SUITE
