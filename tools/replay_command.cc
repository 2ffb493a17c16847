// `parley replay CHANNEL`: re-fold a channel from its log (up to --at) and
// print its lifecycle, adapter state and state hash (replay/state_hash.h).
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/json/records_json.h"
#include "replay/channel_replay.h"
#include "replay/state_hash.h"
#include "tools/cli_output.h"
#include "tools/exit_codes.h"
#include "tools/inspect_commands.h"
#include "tools/read_store.h"

namespace parley::tools {
namespace {

struct ReplayOptions {
  std::filesystem::path data;
  std::string channel;
  std::optional<std::uint64_t> at;
  bool step = false;
  std::string output;
};

nlohmann::json adapter_state_json(const engine::ChannelEntry& channel) {
  return channel.state ? nlohmann::json::parse(channel.state->to_json())
                       : nlohmann::json();
}

std::string or_dash(std::string_view text) {
  return text.empty() ? "-" : std::string(text);
}

std::string names(const engine::Registry& registry,
                  const std::vector<std::string>& ids) {
  std::string text;
  for (const std::string& id : ids) {
    if (!text.empty()) text += ", ";
    text += name_and_id(registry, id);
  }
  return or_dash(text);
}

void print_state(const engine::Registry& registry,
                 const engine::ChannelEntry& channel, std::uint64_t last) {
  const engine::ChannelMetadata& metadata = channel.metadata;
  std::string participants;
  for (const engine::Participant& participant : metadata.participants) {
    if (!participants.empty()) participants += ", ";
    participants +=
        name_and_id(registry, participant.agent_id) + " " + participant.role;
  }
  std::cout << "channel       " << metadata.channel_id << '\n'
            << "type          " << metadata.manifest.type << " v"
            << metadata.manifest.version << '\n'
            << "state         " << engine::to_string(metadata.state) << '\n'
            << "participants  " << participants << '\n'
            << "pending acks  " << names(registry, metadata.pending_acks)
            << '\n'
            << "rejected by   " << names(registry, metadata.rejected_by) << '\n'
            << "created       " << metadata.created_at << '\n'
            << "closed        " << metadata.closed_at.value_or("-") << '\n'
            << "close reason  " << or_dash(metadata.close_reason) << '\n'
            << "at sequence   " << channel.last_sequence << " of " << last
            << '\n'
            << "adapter state "
            << (channel.state ? channel.state->to_json() : "null (dormant)")
            << '\n'
            << "state hash    "
            << replay::hash_hex(replay::channel_state_hash(channel)) << '\n';
}

int run(const ReplayOptions& options) {
  auto store = open_read_only(options.data);
  if (!store) return store.error();
  auto folded = fold_all(**store);
  if (!folded) return folded.error();
  const engine::HubState& state = (*folded)->state();
  const engine::ChannelEntry* live = state.channels.find(options.channel);
  if (!live) {
    return report("channel not found: " + options.channel, kExitNoInput);
  }
  const OutputFormat format = resolve_format(options.output);
  JsonWriter json(std::cout, format);
  replay::StepVisitor on_step;
  if (options.step) {
    if (format == OutputFormat::kText) {
      std::cout << "SEQ    FROM            EVENT                   STATE     "
                   "HASH              ADAPTER STATE\n";
    }
    on_step = [&](const engine::Envelope& envelope,
                  const engine::ChannelEntry& after) {
      const std::string hash =
          replay::hash_hex(replay::channel_state_hash(after));
      if (format == OutputFormat::kText) {
        auto pad = [](std::string text, std::size_t width) {
          text = one_line(text, width);
          std::size_t shown = 0;
          for (char c : text) shown += (c & 0xC0) != 0x80;
          if (shown < width) text.append(width - shown, ' ');
          return text;
        };
        std::cout << pad(std::to_string(envelope.sequence), 5) << "  "
                  << pad(name_of(state.registry, envelope.sender_id), 14)
                  << "  " << pad(envelope.event_type, 22) << "  "
                  << pad(std::string(engine::to_string(after.metadata.state)),
                         8)
                  << "  " << hash << "  "
                  << one_line(after.state ? after.state->to_json() : "null",
                              120)
                  << '\n';
        return;
      }
      json.write({{"record", "step"},
                  {"sequence", envelope.sequence},
                  {"envelope_id", envelope.envelope_id},
                  {"sender_id", envelope.sender_id},
                  {"sender_name", name_of(state.registry, envelope.sender_id)},
                  {"event_type", envelope.event_type},
                  {"state", engine::to_string(after.metadata.state)},
                  {"adapter_state", adapter_state_json(after)},
                  {"state_hash", hash}});
    };
  }
  auto replayed = replay::ChannelReplay::run(
      **store, options.channel, options.at.value_or(log::kLastSequence),
      on_step);
  if (!replayed) return report(replayed.error());
  const engine::ChannelEntry& channel = (*replayed)->channel();
  if (format == OutputFormat::kText) {
    if (options.step) std::cout << '\n';
    print_state(state.registry, channel, live->last_sequence);
    return kExitOk;
  }
  json.write(
      {{"record", "state"},
       {"channel_id", channel.metadata.channel_id},
       {"sequence", channel.last_sequence},
       {"last_sequence", live->last_sequence},
       {"metadata", engine::to_json(channel.metadata)},
       {"adapter_state", adapter_state_json(channel)},
       {"state_hash", replay::hash_hex(replay::channel_state_hash(channel))}});
  json.finish();
  return kExitOk;
}

}  // namespace

void add_replay_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ReplayOptions>();
  auto* command = app.add_subcommand(
      "replay",
      "Re-fold a channel from its log, up to --at, and print its lifecycle, "
      "adapter state and state hash; --step prints the state after each "
      "envelope.\n"
      "Example: parley replay --data ./parley-data "
      "18ea415ef6c1c1a0b2d3e4f5a6b7c8d9 --at 5 --step");
  add_store_option(*command, options->data);
  command->add_option("channel", options->channel, "the channel id")
      ->required();
  command->add_option("--at", options->at,
                      "fold up to this per-channel sequence (0: as created)");
  command->add_flag("--step", options->step,
                    "print the state after each envelope");
  add_output_option(*command, options->output);
  command->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace parley::tools
