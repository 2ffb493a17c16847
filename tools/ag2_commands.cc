#include "tools/ag2_commands.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "log/open_store.h"
#include "log/store_location.h"
#include "replay/ag2_export.h"
#include "replay/ag2_import.h"
#include "tools/exit_codes.h"

namespace parley::tools {
namespace {

struct Ag2CommandOptions {
  std::filesystem::path data;
  std::filesystem::path dir;  // OUT_DIR or AG2_DIR
};

int ag2_exit_code(replay::Ag2ErrorKind kind) {
  switch (kind) {
    case replay::Ag2ErrorKind::kUsage:
      return kExitUsage;
    case replay::Ag2ErrorKind::kData:
      return kExitDataError;
    case replay::Ag2ErrorKind::kNotFound:
      return kExitNoInput;
    case replay::Ag2ErrorKind::kIo:
      return kExitIoError;
  }
  return kExitSoftware;
}

int run_export(const Ag2CommandOptions& options) {
  auto opened = log::open_store_read_only(options.data.string());
  if (!opened) {
    std::cerr << "parley: " << opened.error().message << '\n';
    return exit_code_for(opened.error().code);
  }
  auto report = replay::export_ag2(**opened, options.dir);
  if (!report) {
    std::cerr << "parley: " << report.error().message << '\n';
    return ag2_exit_code(report.error().kind);
  }
  std::cout << "exported " << report->agents << " agents, " << report->channels
            << " channels, " << report->envelopes << " envelopes, "
            << report->audit_records << " audit records to "
            << options.dir.string() << '\n';
  return kExitOk;
}

int run_import(const Ag2CommandOptions& options) {
  auto opened = log::open_store(options.data.string());
  if (!opened) {
    std::cerr << "parley: " << opened.error().message << '\n';
    return exit_code_for(opened.error().code);
  }
  auto report = replay::import_ag2(options.dir, *opened->store);
  if (!report) {
    std::cerr << "parley: " << report.error().message << '\n';
    if (opened->recovery.created &&
        !log::is_postgres_location(options.data.string())) {
      // Leave no trace: the store this command created holds nothing.
      (void)opened->store->close();
      opened->store.reset();
      std::error_code ignored;
      std::filesystem::remove_all(options.data, ignored);
    }
    return ag2_exit_code(report.error().kind);
  }
  for (const std::string& warning : report->warnings) {
    std::cerr << "parley: " << warning << '\n';
  }
  std::cout << "imported " << report->agents << " agents, " << report->channels
            << " channels, " << report->envelopes << " envelopes, "
            << report->audit_records << " audit records, " << report->cursors
            << " cursors into " << log::redact_location(options.data.string())
            << '\n';
  return kExitOk;
}

}  // namespace

void add_ag2_commands(CLI::App& app, int& exit_code) {
  auto export_options = std::make_shared<Ag2CommandOptions>();
  auto* exporter = app.add_subcommand(
      "export-ag2",
      "Write a store as AG2's on-disk layout (agents/, channels/, registry/,\n"
      "audit/), which AG2's Python hub opens. OUT_DIR must be absent or\n"
      "empty. The store is opened read-only.\n"
      "Example: parley export-ag2 --data ./parley-data ./ag2-store");
  exporter
      ->add_option("--data,--store", export_options->data,
                   "the store: a directory or a postgresql:// URI")
      ->required();
  exporter->add_option("OUT_DIR", export_options->dir, "where to write")
      ->required();
  exporter->callback([export_options, &exit_code] {
    exit_code = run_export(*export_options);
  });

  auto import_options = std::make_shared<Ag2CommandOptions>();
  auto* importer = app.add_subcommand(
      "import-ag2",
      "Read AG2's on-disk layout into a fresh store (created if absent; a\n"
      "store that holds records is refused). A torn last line of a WAL is\n"
      "reported and skipped; any other malformed file is a data error (65)\n"
      "and nothing is written.\n"
      "Example: parley import-ag2 --data ./parley-data ./ag2-store");
  importer
      ->add_option("--data,--store", import_options->data,
                   "the store: a directory or a postgresql:// URI")
      ->required();
  importer->add_option("AG2_DIR", import_options->dir, "AG2's store root")
      ->required()
      ->check(CLI::ExistingDirectory);
  importer->callback([import_options, &exit_code] {
    exit_code = run_import(*import_options);
  });
}

}  // namespace parley::tools
