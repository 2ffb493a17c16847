// What every read-only command shares: the store option, opening the store
// read-only (a RocksDB secondary, so a live hub may hold it), folding it,
// and turning failures into a message on stderr and a sysexits code.
#pragma once

#include <cstdint>
#include <expected>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "engine/base/error.h"
#include "log/log_store.h"
#include "replay/folded_store.h"

namespace CLI {
class App;
}

namespace parley::tools {

// Adds the required store option to `command`: `--data STORE` as `parley
// exec` and `parley log info` name it, `--store STORE` as an alias. A
// STORE is a directory (RocksDB) or a postgresql:// URI
// (log/store_location.h).
void add_store_option(CLI::App& command, std::filesystem::path& directory);

// The store `directory` names (either backend), read-only. On failure prints
// "parley: <why>" to stderr and returns the exit code: 66 no store, 69
// unavailable, 65 corrupt or another version, 74 I/O.
std::expected<std::unique_ptr<log::LogStore>, int> open_read_only(
    const std::filesystem::path& directory);

// The whole store folded, with a progress bar on stderr when it is a
// terminal; `on_record` sees each record folded. On failure prints and
// returns the exit code, as above.
std::expected<std::unique_ptr<replay::FoldedStore>, int> fold_all(
    const log::LogStore& store,
    const replay::FoldedStore::RecordObserver& on_record = {});

// Prints "parley: <message>" to stderr and returns the exit code for
// `error`: 66 not found, 74 an I/O failure of the log, 65 otherwise.
int report(const engine::Error& error);
int report(const log::Error& error);
// Prints "parley: <message>" to stderr and returns `exit_code`.
int report(std::string_view message, int exit_code);

// The files under `directory`, in bytes.
std::uintmax_t bytes_on_disk(const std::filesystem::path& directory);

}  // namespace parley::tools
