// `parley log info`: what a store holds, and what opening it found.
#pragma once

#include <filesystem>

namespace CLI {
class App;
}

namespace parley::tools {

// Adds the `info` subcommand to `log`; it sets `exit_code` when it runs.
void add_log_info_command(CLI::App& log, int& exit_code);

}  // namespace parley::tools
