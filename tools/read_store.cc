#include "tools/read_store.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "log/open_store.h"
#include "tools/cli_output.h"
#include "tools/exit_codes.h"

namespace parley::tools {

void add_store_option(CLI::App& command, std::filesystem::path& directory) {
  command
      .add_option("--data,--store", directory,
                  "the store: a directory or a postgresql:// URI")
      ->required();
}

int report(std::string_view message, int exit_code) {
  std::cerr << "parley: " << message << '\n';
  return exit_code;
}

int report(const log::Error& error) {
  return report(error.message, exit_code_for(error.code));
}

int report(const engine::Error& error) {
  int code = kExitDataError;
  if (error.kind == engine::ErrorKind::kNotFound) {
    code = kExitNoInput;
  } else if (error.log_code) {
    code = exit_code_for(*error.log_code);
  }
  return report(error.message, code);
}

std::expected<std::unique_ptr<log::LogStore>, int> open_read_only(
    const std::filesystem::path& directory) {
  auto opened = log::open_store_read_only(directory.string());
  if (!opened) return std::unexpected(report(opened.error()));
  return std::move(*opened);
}

std::expected<std::unique_ptr<replay::FoldedStore>, int> fold_all(
    const log::LogStore& store,
    const replay::FoldedStore::RecordObserver& on_record) {
  Progress progress("folding", store.last_sequence());
  auto folded = replay::FoldedStore::fold(
      store, log::kLastSequence,
      [&](std::uint64_t sequence, std::string_view record) {
        progress.update(sequence);
        if (on_record) on_record(sequence, record);
      });
  progress.finish();
  if (!folded) return std::unexpected(report(folded.error()));
  return std::move(*folded);
}

std::uintmax_t bytes_on_disk(const std::filesystem::path& directory) {
  std::uintmax_t total = 0;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(directory, error)) {
    if (entry.is_regular_file(error)) total += entry.file_size(error);
  }
  return total;
}

}  // namespace parley::tools
