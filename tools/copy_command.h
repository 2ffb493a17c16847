// `parley copy --from STORE --to STORE`: copies a whole log between stores
// of either backend (log/copy_log.h), then audits the copy.
#pragma once

namespace CLI {
class App;
}

namespace parley::tools {

// Adds the `copy` subcommand to `app`; it sets `exit_code` when it runs.
void add_copy_command(CLI::App& app, int& exit_code);

}  // namespace parley::tools
