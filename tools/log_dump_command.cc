// `parley log dump`: every record of the log in log-sequence order, all
// kinds (replay/record_json.h gives each one's JSON).
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/json/records_json.h"
#include "replay/record_json.h"
#include "tools/cli_output.h"
#include "tools/exit_codes.h"
#include "tools/inspect_commands.h"
#include "tools/read_store.h"

namespace parley::tools {
namespace {

struct LogDumpOptions {
  std::filesystem::path data;
  std::uint64_t from = 1;
  std::uint64_t to = log::kLastSequence;
  std::string output;
};

int run(const LogDumpOptions& options) {
  auto store = open_read_only(options.data);
  if (!store) return store.error();
  const OutputFormat format = resolve_format(options.output);
  JsonWriter json(std::cout, format);
  if (format == OutputFormat::kText) {
    std::cout << "LOG SEQ  KIND               RECORD\n";
  }
  Progress progress("dumping", (*store)->last_sequence());
  auto read = (*store)->read(
      options.from, options.to,
      [&](std::uint64_t sequence, std::string_view record) {
        nlohmann::json value = replay::record_to_json(sequence, record);
        progress.update(sequence);
        if (format != OutputFormat::kText) {
          json.write(value);
          return static_cast<bool>(std::cout);
        }
        std::string kind = value["kind"];
        value.erase("kind");
        value.erase("log_sequence");
        value.erase("schema_version");
        std::string number = std::to_string(sequence);
        number.resize(std::max<std::size_t>(number.size(), 7), ' ');
        kind.resize(std::max<std::size_t>(kind.size(), 17), ' ');
        std::cout << number << "  " << kind << "  "
                  << one_line(engine::dump_compact(value), 160) << '\n';
        return static_cast<bool>(std::cout);
      });
  progress.finish();
  json.finish();
  if (!read) return report(read.error());
  return kExitOk;
}

}  // namespace

void add_log_dump_command(CLI::App& log, int& exit_code) {
  auto options = std::make_shared<LogDumpOptions>();
  auto* command = log.add_subcommand(
      "dump",
      "Print every record of the log in log-sequence order, all kinds "
      "(envelopes, channels created, agents registered and updated, cursors, "
      "audit records, ...).\n"
      "Example: parley log dump --data ./parley-data -o jsonl > log.jsonl");
  add_store_option(*command, options->data);
  command->add_option("--from", options->from, "the first log sequence");
  command->add_option("--to", options->to, "the last log sequence");
  add_output_option(*command, options->output);
  command->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace parley::tools
