// `parley serve --data DIR [--listen HOST:PORT] ...`: the hub on the
// network (engine/transport/server.h), until SIGINT or SIGTERM.
#pragma once

namespace CLI {
class App;
}

namespace parley::tools {

// Adds the `serve` subcommand to `app`; it sets `exit_code` when it runs.
void add_serve_command(CLI::App& app, int& exit_code);

}  // namespace parley::tools
