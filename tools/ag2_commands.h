// `parley export-ag2 OUT_DIR --data DIR` and `parley import-ag2 AG2_DIR
// --data DIR`: a store to AG2's on-disk layout and back
// (replay/ag2_export.h, replay/ag2_import.h).
#pragma once

namespace CLI {
class App;
}

namespace parley::tools {

// Adds both subcommands to `app`; they set `exit_code` when they run.
void add_ag2_commands(CLI::App& app, int& exit_code);

}  // namespace parley::tools
