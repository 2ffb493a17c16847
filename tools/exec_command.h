// `parley exec --data DIR SCRIPT.jsonl`: runs a script of control-plane ops
// against an embedded hub on DIR and prints one JSON result per line.
#pragma once

namespace CLI {
class App;
}

namespace parley::tools {

// Adds the `exec` subcommand to `app`; it sets `exit_code` when it runs.
void add_exec_command(CLI::App& app, int& exit_code);

}  // namespace parley::tools
