// `parley stats`: what a store holds — records per kind, channels per state
// and per type, bytes on disk, the largest channels.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "log/store_location.h"
#include "replay/record_json.h"
#include "tools/cli_output.h"
#include "tools/exit_codes.h"
#include "tools/inspect_commands.h"
#include "tools/read_store.h"

namespace parley::tools {
namespace {

struct StatsOptions {
  std::filesystem::path data;
  std::size_t top = 5;
  std::string output;
};

int run(const StatsOptions& options) {
  auto store = open_read_only(options.data);
  if (!store) return store.error();
  std::map<std::string, std::uint64_t> kinds;
  auto folded = fold_all(**store, [&](std::uint64_t, std::string_view record) {
    ++kinds[std::string(replay::record_kind(record))];
  });
  if (!folded) return folded.error();
  const engine::HubState& state = (*folded)->state();
  std::map<std::string, std::uint64_t> by_state, by_type;
  std::vector<const engine::ChannelEntry*> largest;
  for (const engine::ChannelEntry* channel : state.channels.in_order()) {
    ++by_state[std::string(engine::to_string(channel->metadata.state))];
    ++by_type[channel->metadata.manifest.type];
    largest.push_back(channel);
  }
  std::stable_sort(largest.begin(), largest.end(),
                   [](const auto* a, const auto* b) {
                     return a->last_sequence > b->last_sequence;
                   });
  if (largest.size() > options.top) largest.resize(options.top);
  const std::string location = log::redact_location(options.data.string());
  // A PostgreSQL store's size is the database's business: not shown.
  const bool on_disk = !log::is_postgres_location(options.data.string());
  const std::uintmax_t bytes = on_disk ? bytes_on_disk(options.data) : 0;
  const std::uint64_t last = (*folded)->last_log_sequence();

  const OutputFormat format = resolve_format(options.output);
  if (format != OutputFormat::kText) {
    nlohmann::json top = nlohmann::json::array();
    for (const engine::ChannelEntry* channel : largest) {
      nlohmann::json names = nlohmann::json::array();
      for (const auto& participant : channel->metadata.participants) {
        names.push_back(name_of(state.registry, participant.agent_id));
      }
      top.push_back({{"channel_id", channel->metadata.channel_id},
                     {"type", channel->metadata.manifest.type},
                     {"state", engine::to_string(channel->metadata.state)},
                     {"envelopes", channel->last_sequence},
                     {"participants", names}});
    }
    JsonWriter json(std::cout, format);
    json.write(
        {{"store", location},
         {"last_sequence", last},
         {"bytes_on_disk", on_disk ? nlohmann::json(bytes) : nlohmann::json()},
         {"agents", state.registry.size()},
         {"records", kinds},
         {"channels_by_state", by_state},
         {"channels_by_type", by_type},
         {"largest_channels", top}});
    json.finish();
    return kExitOk;
  }
  std::cout << "store          " << location << '\n'
            << "last sequence  " << last << '\n'
            << "bytes on disk  " << (on_disk ? std::to_string(bytes) : "-")
            << '\n'
            << "agents         " << state.registry.size() << '\n'
            << "channels       " << state.channels.in_order().size() << "\n\n";
  auto counts = [](std::string_view title,
                   const std::map<std::string, std::uint64_t>& values) {
    Table table({std::string(title), "COUNT"});
    for (const auto& [name, count] : values) {
      table.add({name, std::to_string(count)});
    }
    table.print(std::cout);
    std::cout << '\n';
  };
  counts("RECORD KIND", kinds);
  counts("CHANNEL STATE", by_state);
  counts("CHANNEL TYPE", by_type);
  Table table(
      {"LARGEST CHANNEL", "TYPE", "STATE", "ENVELOPES", "PARTICIPANTS"});
  for (const engine::ChannelEntry* channel : largest) {
    std::string names;
    for (const auto& participant : channel->metadata.participants) {
      if (!names.empty()) names += ", ";
      names += name_of(state.registry, participant.agent_id);
    }
    table.add({channel->metadata.channel_id, channel->metadata.manifest.type,
               std::string(engine::to_string(channel->metadata.state)),
               std::to_string(channel->last_sequence), names});
  }
  table.print(std::cout);
  return kExitOk;
}

}  // namespace

void add_stats_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<StatsOptions>();
  auto* command = app.add_subcommand(
      "stats",
      "Summarise a store: records per kind, channels per state and type, "
      "bytes on disk, the largest channels.\n"
      "Example: parley stats --data ./parley-data --top 10");
  add_store_option(*command, options->data);
  command->add_option("--top", options->top,
                      "how many of the largest channels to list (default 5)");
  add_output_option(*command, options->output);
  command->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace parley::tools
