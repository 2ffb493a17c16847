#include "tools/exec_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "log/open_store.h"
#include "tools/exit_codes.h"
#include "tools/script_runner.h"

namespace parley::tools {
namespace {

struct ExecOptions {
  std::filesystem::path data;
  std::string script;  // a path, or "-" for standard input
};

int run(const ExecOptions& options) {
  std::ifstream file;
  std::istream* input = &std::cin;
  if (options.script != "-") {
    // A directory opens as a stream that reads nothing: a script of no
    // ops, run without a word.
    std::error_code ignored;
    if (std::filesystem::is_directory(options.script, ignored)) {
      std::cerr << "parley: cannot read script " << options.script
                << ": a directory\n";
      return kExitNoInput;
    }
    file.open(options.script);
    if (!file) {
      std::cerr << "parley: cannot read script " << options.script << '\n';
      return kExitNoInput;
    }
    input = &file;
  }
  std::optional<log::ErrorCode> open_failure;
  auto runner = engine::ScriptRunner::start(
      [&]() -> engine::Result<std::shared_ptr<log::LogStore>> {
        auto opened = log::open_store(options.data.string());
        if (!opened) {
          open_failure = opened.error().code;
          return engine::fail(engine::ErrorKind::kStorage,
                              opened.error().message);
        }
        if (opened->recovery.torn_tail) {
          std::cerr << "parley: recovered from a torn WAL tail: "
                    << opened->recovery.detail << '\n';
        }
        return std::shared_ptr<log::LogStore>(std::move(opened->store));
      });
  if (!runner) {
    std::cerr << "parley: " << runner.error().message << '\n';
    return open_failure ? exit_code_for(*open_failure) : kExitDataError;
  }
  std::string line;
  while (std::getline(*input, line)) {
    if (auto output = (*runner)->run_line(line)) {
      std::cout << *output << '\n' << std::flush;
    }
  }
  return kExitOk;
}

}  // namespace

void add_exec_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ExecOptions>();
  auto* exec = app.add_subcommand(
      "exec",
      "Run a JSON-lines script of control-plane ops against an embedded hub");
  exec->add_option("--data", options->data,
                   "The hub's store: a directory or a postgresql:// URI")
      ->required();
  exec->add_option("script", options->script,
                   "The script (.jsonl), or - for standard input")
      ->required();
  exec->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace parley::tools
