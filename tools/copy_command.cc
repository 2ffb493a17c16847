#include "tools/copy_command.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

#include "log/copy_log.h"
#include "log/open_store.h"
#include "log/store_location.h"
#include "replay/state_hash.h"
#include "replay/store_audit.h"
#include "tools/cli_output.h"
#include "tools/exit_codes.h"
#include "tools/read_store.h"

namespace parley::tools {
namespace {

struct CopyOptions {
  std::string from;
  std::string to;
};

// Audits `store`: its state hash when it is clean, else prints why not
// and returns the exit code.
std::expected<std::uint64_t, int> clean_hash(const log::LogStore& store,
                                             const std::string& name) {
  auto audited = replay::audit_store(store);
  if (!audited) return std::unexpected(report(audited.error()));
  if (!audited->clean()) {
    for (const replay::AuditProblem& problem : audited->problems) {
      std::cerr << "parley: " << name << ": " << replay::describe(problem)
                << '\n';
    }
    return std::unexpected(report(name + " has " +
                                      std::to_string(audited->problems.size()) +
                                      " problem(s) (parley audit lists them)",
                                  kExitDataError));
  }
  return audited->state_hash;
}

int run(const CopyOptions& options) {
  const std::string from_name = log::redact_location(options.from);
  const std::string to_name = log::redact_location(options.to);
  auto from = log::open_store_read_only(options.from);
  if (!from) return report(from.error());
  const log::LogStore& source = **from;
  // A source with problems would carry them into the copy.
  auto source_hash = clean_hash(source, "the source " + from_name);
  if (!source_hash) return source_hash.error();
  auto to = log::open_store(options.to);
  if (!to) return report(to.error());
  log::LogStore& copy = *to->store;
  if (copy.last_sequence() != 0) {
    return report("the destination " + to_name + " holds " +
                      std::to_string(copy.last_sequence()) +
                      " records; a copy goes only into an empty store",
                  kExitUsage);
  }
  log::Result<log::CopyReport> copied;
  {
    Progress progress("copying", source.last_sequence());
    copied = log::copy_log(source, copy, 1024,
                           [&](std::uint64_t done) { progress.update(done); });
  }
  if (!copied) {
    report(copied.error());
    return report("the copy in " + to_name +
                      " is incomplete; remove it before copying again",
                  exit_code_for(copied.error().code));
  }
  if (auto same = log::compare_logs(source, copy); !same) {
    return report("the copy differs from the source: " + same.error().message,
                  kExitDataError);
  }
  auto copy_hash = clean_hash(copy, "the copy " + to_name);
  if (!copy_hash) return copy_hash.error();
  if (*copy_hash != *source_hash) {
    return report("the copy folds to state hash " +
                      replay::hash_hex(*copy_hash) + ", the source to " +
                      replay::hash_hex(*source_hash),
                  kExitDataError);
  }
  if (auto closed = copy.close(); !closed) return report(closed.error());
  std::cout << "copied " << copied->records << " records ("
            << copied->channel_entries << " channel entries, "
            << copied->idempotency_keys << " idempotency keys) from "
            << from_name << " to " << to_name << '\n'
            << "same records and indexes; audit clean, state hash "
            << replay::hash_hex(*copy_hash) << " on both\n";
  return kExitOk;
}

}  // namespace

void add_copy_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<CopyOptions>();
  auto* copy = app.add_subcommand(
      "copy",
      "Copy a whole log into an empty store (created if absent), either\n"
      "backend to either, then check the copy: the same records and\n"
      "indexes, a clean audit and the source's state hash. The source must\n"
      "audit clean and must not be written meanwhile.\n"
      "Example: parley copy --from ./parley-data --to "
      "postgresql://parley@db/parley");
  copy->add_option("--from", options->from,
                   "the store to copy: a directory or a postgresql:// URI")
      ->required();
  copy->add_option("--to", options->to,
                   "an empty or absent store: a directory or a "
                   "postgresql:// URI")
      ->required();
  copy->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace parley::tools
