// `parley agents`: the registry, as folded from the log.
#include <CLI/CLI.hpp>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "tools/cli_output.h"
#include "tools/exit_codes.h"
#include "tools/inspect_commands.h"
#include "tools/read_store.h"

namespace parley::tools {
namespace {

struct AgentsOptions {
  std::filesystem::path data;
  std::string capability;  // empty: any
  std::string output;
};

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) {
    if (!text.empty()) text += ", ";
    text += item;
  }
  return text.empty() ? "-" : text;
}

int run(const AgentsOptions& options) {
  auto store = open_read_only(options.data);
  if (!store) return store.error();
  auto folded = fold_all(**store);
  if (!folded) return folded.error();
  const engine::Registry& registry = (*folded)->state().registry;
  engine::AgentFilter filter{.limit = std::numeric_limits<std::size_t>::max()};
  if (!options.capability.empty()) filter.capability = options.capability;
  const OutputFormat format = resolve_format(options.output);
  Table table({"NAME", "AGENT ID", "KIND", "CAPABILITIES", "OBSERVED"});
  JsonWriter json(std::cout, format);
  for (const engine::AgentRecord* agent : registry.list(filter)) {
    std::vector<std::string> observed;
    for (const auto& [capability, stats] : agent->resume.observed) {
      observed.push_back(capability);
    }
    if (format == OutputFormat::kText) {
      table.add({agent->passport.name, agent->agent_id(),
                 std::string(agent->passport.effective_kind()),
                 joined(agent->resume.claimed_capabilities), joined(observed)});
      continue;
    }
    json.write({{"agent_id", agent->agent_id()},
                {"name", agent->passport.name},
                {"kind", agent->passport.effective_kind()},
                {"capabilities", agent->resume.claimed_capabilities},
                {"observed_capabilities", observed},
                {"summary", agent->resume.summary},
                {"created_at", agent->passport.created_at}});
  }
  if (format == OutputFormat::kText) {
    table.print(std::cout);
  } else {
    json.finish();
  }
  return kExitOk;
}

}  // namespace

void add_agents_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<AgentsOptions>();
  auto* command = app.add_subcommand(
      "agents",
      "List the registered agents of a store: names, ids, kinds, claimed and "
      "observed capabilities.\n"
      "Example: parley agents --data ./parley-data --capability math");
  add_store_option(*command, options->data);
  command->add_option("--capability", options->capability,
                      "only agents claiming or observed with it");
  add_output_option(*command, options->output);
  command->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace parley::tools
