// tools/examples/: each example program completes its flow in both modes,
// in-process (no --url) and against a `parley serve` process (--url).
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <regex>
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

// Whether `output` has a line matching `line` (an ECMAScript regex).
bool has_line(const std::string& output, const std::string& line) {
  return std::regex_search(output, std::regex("(^|\n)" + line + "\n"));
}

void check_qa_transcript(const Run& qa) {
  CHECK_MESSAGE(qa.exit_code == 0, qa.output);
  CHECK(
      has_line(qa.output, R"(channel \w+ \(consulting\) opened by asker-\d+)"));
  CHECK(
      has_line(qa.output, R"(asker-\d+: Can we ship the release this week\?)"));
  CHECK(
      has_line(qa.output,
               R"(answerer-\d+: Ship it on Thursday; the tests are green\.)"));
  CHECK(qa.output.find("\"reason\":\"consulting_complete\"") !=
        std::string::npos);
}

void check_worker_transcript(const Run& worker) {
  CHECK_MESSAGE(worker.exit_code == 0, worker.output);
  CHECK(has_line(worker.output,
                 R"(asker-\d+: count the words in this sentence)"));
  CHECK(has_line(worker.output, R"(counter-\d+: 6 words)"));
  CHECK(worker.output.find("\"reason\":\"consulting_complete\"") !=
        std::string::npos);
}

void check_gateway_transcript(const Run& gateway) {
  CHECK_MESSAGE(gateway.exit_code == 0, gateway.output);
  for (const char* text : {"message 1", "message 2", "message 3"}) {
    CHECK(has_line(gateway.output, std::string(R"(queue <- \w+: )") + text));
  }
}

void check_workflow_transcript(const Run& workflow) {
  CHECK_MESSAGE(workflow.exit_code == 0, workflow.output);
  CHECK(std::regex_search(
      workflow.output,
      std::regex(R"(editor-\d+: Write a one-line tagline for Parley\.\n)"
                 R"(drafter-\d+: Parley: every agent heard, nothing lost\.\n)"
                 R"(reviewer-\d+: Approved: short, and true\.\n)")));
  CHECK(workflow.output.find("\"reason\":\"sequence_complete\"") !=
        std::string::npos);
}

// Each example against `parley serve`, which it leaves running cleanly.
template <typename Check>
void against_serve(const std::string& program, Check check) {
  ScratchDir dir;
  ServeProcess serve(dir.path() / "store");
  check(run(program + " --url " + serve.url(), dir));
  CHECK(serve.stop(SIGTERM) == 0);
}

}  // namespace

TEST_SUITE("client") {
  TEST_CASE("the qa example completes on an in-process hub") {
    ScratchDir dir;
    check_qa_transcript(run(PARLEY_EXAMPLE_QA, dir));
  }

  TEST_CASE("the qa example completes against parley serve") {
    against_serve(PARLEY_EXAMPLE_QA, check_qa_transcript);
  }

  TEST_CASE("the worker example completes on an in-process hub") {
    ScratchDir dir;
    check_worker_transcript(run(PARLEY_EXAMPLE_WORKER, dir));
  }

  TEST_CASE("the worker example completes against parley serve") {
    against_serve(PARLEY_EXAMPLE_WORKER, check_worker_transcript);
  }

  TEST_CASE("the gateway example completes on an in-process hub") {
    ScratchDir dir;
    check_gateway_transcript(run(PARLEY_EXAMPLE_GATEWAY, dir));
  }

  TEST_CASE("the gateway example completes against parley serve") {
    against_serve(PARLEY_EXAMPLE_GATEWAY, check_gateway_transcript);
  }

  TEST_CASE("the workflow example completes on an in-process hub") {
    ScratchDir dir;
    check_workflow_transcript(run(PARLEY_EXAMPLE_WORKFLOW, dir));
  }

  TEST_CASE("the workflow example completes against parley serve") {
    against_serve(PARLEY_EXAMPLE_WORKFLOW, check_workflow_transcript);
  }
}  // TEST_SUITE
