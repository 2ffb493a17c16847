#include "tools/log_info_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>

#include "log/open_store.h"
#include "log/store_location.h"
#include "parley/schemas/log_generated.h"
#include "tools/exit_codes.h"
#include "tools/read_store.h"

namespace parley::tools {
namespace {

int run(const std::filesystem::path& data) {
  const std::string location = data.string();
  auto opened = log::open_store(location, {.create_if_missing = false});
  if (!opened) {
    std::cerr << "parley: " << opened.error().message << '\n';
    return exit_code_for(opened.error().code);
  }
  const log::RecoveryReport& recovery = opened->recovery;
  if (recovery.torn_tail) {
    std::cerr << "parley: recovered from a torn WAL tail: " << recovery.detail
              << '\n';
  }
  std::map<std::string, std::uint64_t> kinds;
  auto read = opened->store->read(
      1, log::kLastSequence, [&](std::uint64_t, std::string_view record) {
        ++kinds[schema::EnumNameBody(
            schema::GetRecord(record.data())->body_type())];
        return true;
      });
  std::cout << "store          " << log::redact_location(location) << '\n'
            << "last sequence  " << opened->store->last_sequence() << '\n'
            << "torn tail      " << (recovery.torn_tail ? "yes" : "no") << '\n';
  if (!log::is_postgres_location(location)) {
    std::cout << "bytes on disk  " << bytes_on_disk(data) << '\n';
  }
  for (const auto& [kind, count] : kinds) {
    std::cout << "records        " << count << ' ' << kind << '\n';
  }
  if (!read) {
    std::cerr << "parley: " << read.error().message << '\n';
    return exit_code_for(read.error().code);
  }
  return kExitOk;
}

}  // namespace

void add_log_info_command(CLI::App& log, int& exit_code) {
  auto* info = log.add_subcommand(
      "info",
      "Open a store, report what recovery found, count its records by kind.\n"
      "Example: parley log info --data ./parley-data");
  auto data = std::make_shared<std::filesystem::path>();
  info->add_option("--data", *data,
                   "the store: a directory or a postgresql:// URI")
      ->required();
  info->callback([data, &exit_code] { exit_code = run(*data); });
}

}  // namespace parley::tools
