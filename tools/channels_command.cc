// `parley channels`: every channel with its type, state, participants,
// envelope count, created/closed time and close reason.
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "tools/cli_output.h"
#include "tools/exit_codes.h"
#include "tools/inspect_commands.h"
#include "tools/read_store.h"

namespace parley::tools {
namespace {

struct ChannelsOptions {
  std::filesystem::path data;
  std::string state;  // empty: any
  std::string type;   // empty: any
  std::string agent;  // a name or an id; empty: any
  std::string output;
};

int run(const ChannelsOptions& options) {
  auto store = open_read_only(options.data);
  if (!store) return store.error();
  auto folded = fold_all(**store);
  if (!folded) return folded.error();
  const engine::HubState& state = (*folded)->state();
  std::optional<std::string> agent_id;
  if (!options.agent.empty()) {
    const engine::AgentRecord* agent = state.registry.resolve(options.agent);
    agent_id = agent ? agent->agent_id() : options.agent;
  }
  const OutputFormat format = resolve_format(options.output);
  Table table({"CHANNEL", "TYPE", "STATE", "PARTICIPANTS", "ENVELOPES",
               "CREATED", "CLOSED", "REASON"});
  JsonWriter json(std::cout, format);
  for (const engine::ChannelEntry* channel : state.channels.in_order()) {
    const engine::ChannelMetadata& metadata = channel->metadata;
    if (!options.state.empty() &&
        engine::to_string(metadata.state) != options.state) {
      continue;
    }
    if (!options.type.empty() && metadata.manifest.type != options.type) {
      continue;
    }
    if (agent_id && !metadata.has_participant(*agent_id)) continue;
    if (format == OutputFormat::kText) {
      std::string names;
      for (const engine::Participant& participant : metadata.participants) {
        if (!names.empty()) names += ", ";
        names += name_of(state.registry, participant.agent_id);
      }
      table.add({metadata.channel_id, metadata.manifest.type,
                 std::string(engine::to_string(metadata.state)), names,
                 std::to_string(channel->last_sequence), metadata.created_at,
                 metadata.closed_at.value_or("-"),
                 metadata.close_reason.empty() ? "-" : metadata.close_reason});
      continue;
    }
    nlohmann::json participants = nlohmann::json::array();
    for (const engine::Participant& participant : metadata.participants) {
      participants.push_back(
          {{"agent_id", participant.agent_id},
           {"name", name_of(state.registry, participant.agent_id)},
           {"role", participant.role}});
    }
    json.write(
        {{"channel_id", metadata.channel_id},
         {"type", metadata.manifest.type},
         {"version", metadata.manifest.version},
         {"state", engine::to_string(metadata.state)},
         {"participants", participants},
         {"envelopes", channel->last_sequence},
         {"created_at", metadata.created_at},
         {"closed_at", metadata.closed_at ? nlohmann::json(*metadata.closed_at)
                                          : nlohmann::json()},
         {"close_reason", metadata.close_reason}});
  }
  if (format == OutputFormat::kText) {
    table.print(std::cout);
  } else {
    json.finish();
  }
  return kExitOk;
}

}  // namespace

void add_channels_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ChannelsOptions>();
  auto* command = app.add_subcommand(
      "channels",
      "List the channels of a store: type, state, participants, envelope "
      "count, created/closed time, close reason.\n"
      "Example: parley channels --data ./parley-data --state active "
      "--agent alice");
  add_store_option(*command, options->data);
  command->add_option("--state", options->state, "only channels in this state")
      ->check(
          CLI::IsMember({"pending", "active", "closing", "closed", "expired"}));
  command->add_option("--type", options->type,
                      "only channels of this type (consulting, conversation, "
                      "discussion, workflow, ...)");
  command->add_option("--agent", options->agent,
                      "only channels this agent (a name or an id) takes part "
                      "in");
  add_output_option(*command, options->output);
  command->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace parley::tools
