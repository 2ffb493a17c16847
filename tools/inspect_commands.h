// The read-only inspection commands (`parley channels`, `agents`, `log
// show`, `log dump`, `replay`, `view`, `stats`), one source file each. They
// open the store read-only (tools/read_store.h), so they work on a store a
// live hub is writing, and follow tools/cli_output.h.
#pragma once

namespace CLI {
class App;
}

namespace parley::tools {

// Each adds its subcommand to `parent` (`log` for log show/dump, the app
// for the others); it sets `exit_code` when it runs.
void add_channels_command(CLI::App& app, int& exit_code);
void add_agents_command(CLI::App& app, int& exit_code);
void add_log_show_command(CLI::App& log, int& exit_code);
void add_log_dump_command(CLI::App& log, int& exit_code);
void add_replay_command(CLI::App& app, int& exit_code);
void add_view_command(CLI::App& app, int& exit_code);
void add_stats_command(CLI::App& app, int& exit_code);

}  // namespace parley::tools
