#include "tools/audit_command.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "engine/json/python_json.h"
#include "log/open_store.h"
#include "log/store_location.h"
#include "replay/audit_trail.h"
#include "replay/state_hash.h"
#include "replay/store_audit.h"
#include "tools/cli_output.h"
#include "tools/exit_codes.h"

namespace parley::tools {
namespace {

struct AuditCommandOptions {
  std::filesystem::path data;
  std::vector<std::string> channels;
  bool trail = false;
  std::string output;  // -o: text, jsonl or json
};

int print_trail(const log::LogStore& store,
                const AuditCommandOptions& options) {
  auto visited =
      replay::visit_audit_trail(store, [&](const nlohmann::json& record) {
        if (options.channels.empty() ||
            std::ranges::find(options.channels,
                              replay::audit_channel(record)) !=
                options.channels.end()) {
          std::cout << engine::dump_python(record) << '\n';
        }
        return true;
      });
  if (!visited) {
    std::cerr << "parley: " << visited.error().message << '\n';
    return kExitDataError;
  }
  return kExitOk;
}

int run(const AuditCommandOptions& options) {
  // Read-only (a RocksDB secondary, read-only PostgreSQL sessions): works
  // beside a live hub, writes nothing.
  const std::string location = options.data.string();
  auto opened = log::open_store_read_only(location);
  if (!opened) {
    std::cerr << "parley: " << opened.error().message << '\n';
    return exit_code_for(opened.error().code);
  }
  const log::LogStore& store = **opened;
  if (options.trail) return print_trail(store, options);
  // RocksDB: what the next read-write open will do with the WAL's tail: a
  // torn record is dropped (it was never acked); damage before the end
  // refuses the open, which the view above cannot show. (PostgreSQL keeps
  // its own WAL: a store there has no torn tail of Parley's to report.)
  auto torn = log::is_postgres_location(location)
                  ? log::Result<std::optional<std::string>>()
                  : log::find_torn_wal_tail(options.data);
  if (!torn) {
    std::cerr << "parley: " << torn.error().message
              << "; opening the store read-write will refuse it\n";
    return exit_code_for(torn.error().code);
  }
  const std::optional<std::string> torn_note =
      *torn ? std::optional<std::string>(
                  "the WAL ends with a torn record (" + **torn +
                  "): it was never acknowledged, and the next read-write "
                  "open drops it")
            : std::nullopt;
  auto report = replay::audit_store(store, {.channels = options.channels});
  if (!report) {
    std::cerr << "parley: " << report.error().message << '\n';
    return report.error().kind == engine::ErrorKind::kNotFound ? kExitNoInput
                                                               : kExitDataError;
  }
  const OutputFormat format = resolve_format(options.output);
  if (format == OutputFormat::kText) {
    if (torn_note) std::cout << "note: " << *torn_note << '\n';
    for (const replay::AuditProblem& problem : report->problems) {
      std::cout << replay::describe(problem) << '\n';
    }
    std::cout << "records " << report->records << ", channels "
              << report->channels << ", problems " << report->problems.size()
              << ", state hash " << replay::hash_hex(report->state_hash)
              << '\n';
  } else {
    JsonWriter writer(std::cout, format);
    for (const replay::AuditProblem& problem : report->problems) {
      writer.write(
          {{"problem", problem.what},
           {"channel_id", problem.channel.empty()
                              ? nlohmann::json()
                              : nlohmann::json(problem.channel)},
           {"channel_type", problem.channel_type.empty()
                                ? nlohmann::json()
                                : nlohmann::json(problem.channel_type)},
           {"sequence", problem.channel_sequence},
           {"log_sequence", problem.log_sequence}});
    }
    writer.write({{"records", report->records},
                  {"channels", report->channels},
                  {"problems", report->problems.size()},
                  {"state_hash", replay::hash_hex(report->state_hash)},
                  {"wal_torn_tail",
                   torn_note ? nlohmann::json(*torn_note) : nlohmann::json()}});
    writer.finish();
  }
  if (!report->clean()) {
    std::cerr << "parley: audit found " << report->problems.size()
              << " problem(s) in " << log::redact_location(location) << '\n';
    return kExitDataError;
  }
  return kExitOk;
}

}  // namespace

void add_audit_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<AuditCommandOptions>();
  auto* audit = app.add_subcommand(
      "audit",
      "Check a store: every record passes the FlatBuffers Verifier, log and\n"
      "channel sequences are dense, the channel and idempotency indexes match\n"
      "a full scan, folding twice gives one state hash, and the engine\n"
      "reports the folded state. Prints one line per problem (channel,\n"
      "sequence, what is wrong) and a summary; exits 65 when anything is\n"
      "wrong, 0 when clean. -o jsonl: one JSON object per problem, then the\n"
      "summary (default: text on a terminal, JSON lines otherwise).\n"
      "--trail prints the audit records instead.\n"
      "Example: parley audit --data ./parley-data -o text\n"
      "Example: parley audit --data ./parley-data --trail");
  audit
      ->add_option("--data,--store", options->data,
                   "the store: a directory or a postgresql:// URI")
      ->required();
  audit->add_option("channels", options->channels,
                    "only these channels (ids); default: the whole store");
  add_output_option(*audit, options->output);
  audit->add_flag("--trail", options->trail,
                  "print the audit records (JSON lines, AG2's audit.jsonl "
                  "format) in log order");
  audit->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace parley::tools
