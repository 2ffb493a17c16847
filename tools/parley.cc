// The parley command line: one binary, subcommands.
#include <CLI/CLI.hpp>
#include <csignal>
#include <exception>
#include <iostream>
#include <string>

#include "tools/ag2_commands.h"
#include "tools/audit_command.h"
#include "tools/copy_command.h"
#include "tools/exec_command.h"
#include "tools/exit_codes.h"
#include "tools/inspect_commands.h"
#include "tools/log_info_command.h"
#include "tools/serve_command.h"

namespace {

// CLI11 2.1 reads "-1" into an unsigned option as 2^64 - 1 (strtoull's
// rule), so every unsigned option of `app` and of its subcommands gets a
// check that refuses a minus sign.
void refuse_negative_unsigned(CLI::App& app) {
  const CLI::Validator no_minus(
      [](const std::string& input) -> std::string {
        if (input.find('-') == std::string::npos) return {};
        return "expected a whole number, 0 or more, got '" + input + "'";
      },
      "");
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_name() == "UINT") option->check(no_minus);
  }
  for (CLI::App* command : app.get_subcommands({})) {
    refuse_negative_unsigned(*command);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A closed stdout (`parley log dump | head`) ends a command through its
  // stream's failbit, so it still closes its store and cleans up.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app("parley: a durable, event-sourced hub for AG2 agent networks");
  app.require_subcommand(1);
  int exit_code = parley::tools::kExitOk;
  auto* log = app.add_subcommand("log", "Inspect a store's log");
  log->require_subcommand(1);
  parley::tools::add_log_info_command(*log, exit_code);
  parley::tools::add_log_show_command(*log, exit_code);
  parley::tools::add_log_dump_command(*log, exit_code);
  parley::tools::add_exec_command(app, exit_code);
  parley::tools::add_serve_command(app, exit_code);
  parley::tools::add_channels_command(app, exit_code);
  parley::tools::add_agents_command(app, exit_code);
  parley::tools::add_replay_command(app, exit_code);
  parley::tools::add_view_command(app, exit_code);
  parley::tools::add_stats_command(app, exit_code);
  parley::tools::add_audit_command(app, exit_code);
  parley::tools::add_ag2_commands(app, exit_code);
  parley::tools::add_copy_command(app, exit_code);
  refuse_negative_unsigned(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    int code = app.exit(error);
    return code == 0 ? parley::tools::kExitOk : parley::tools::kExitUsage;
  } catch (const std::exception& error) {
    // A bug, not bad input (bad input gets its own message and code). The
    // stack has unwound by now, so every store the command opened is
    // closed and nothing it made is left behind.
    std::cerr << "parley: internal error: " << error.what() << '\n';
    return parley::tools::kExitSoftware;
  }
  return exit_code;
}
