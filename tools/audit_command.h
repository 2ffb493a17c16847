// `parley audit --data DIR [CHANNEL...] [--trail]`: checks a store offline
// (replay/store_audit.h); with --trail prints its audit records instead.
#pragma once

namespace CLI {
class App;
}

namespace parley::tools {

// Adds the `audit` subcommand to `app`; it sets `exit_code` when it runs.
void add_audit_command(CLI::App& app, int& exit_code);

}  // namespace parley::tools
