// `parley view CHANNEL --as AGENT`: what that participant's model would see
// of the channel (engine/views/view.h), under the channel type's
// default view policy or the one given.
#include <CLI/CLI.hpp>
#include <charconv>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/records/log_records.h"
#include "engine/views/view.h"
#include "tools/cli_output.h"
#include "tools/exit_codes.h"
#include "tools/inspect_commands.h"
#include "tools/read_store.h"

namespace parley::tools {
namespace {

struct ViewOptions {
  std::filesystem::path data;
  std::string channel;
  std::string agent;
  std::string policy;  // empty: the adapter's default
  std::string output;
};

// "full", "named", "windowed:N", "named-windowed:N" (AG2's policy names
// are accepted for the first two). nullopt with `error` set when malformed.
std::optional<engine::ViewPolicy> parse_policy(std::string_view text,
                                               std::string& error) {
  if (text == "full" || text == "full_transcript") {
    return engine::ViewPolicy::full_transcript();
  }
  if (text == "named" || text == "named_transcript") {
    return engine::ViewPolicy::named_transcript();
  }
  const bool named = text.starts_with("named-windowed:");
  if (!named && !text.starts_with("windowed:")) {
    error =
        "--policy must be full, named, windowed:N or named-windowed:N, "
        "got '" +
        std::string(text) + "'";
    return std::nullopt;
  }
  const std::string_view number = text.substr(text.find(':') + 1);
  std::int64_t recent_n = 0;
  auto [end, failed] =
      std::from_chars(number.data(), number.data() + number.size(), recent_n);
  if (failed != std::errc() || end != number.data() + number.size()) {
    error = "--policy window size must be an integer, got '" +
            std::string(number) + "'";
    return std::nullopt;
  }
  auto policy = named ? engine::ViewPolicy::named_windowed_summary(recent_n)
                      : engine::ViewPolicy::windowed_summary(recent_n);
  if (!policy) {
    error = policy.error().message;
    return std::nullopt;
  }
  return *policy;
}

std::string describe(const engine::ViewPolicy& policy) {
  std::string text(policy.name());
  if (policy.recent_n()) {
    text += " (recent_n " + std::to_string(*policy.recent_n()) + ")";
  }
  return text;
}

std::string_view kind_name(engine::ModelItem::Kind kind) {
  switch (kind) {
    case engine::ModelItem::Kind::kUser:
      return "user";
    case engine::ModelItem::Kind::kAssistant:
      return "assistant";
    case engine::ModelItem::Kind::kSummary:
      return "summary";
  }
  return "user";
}

int run(const ViewOptions& options) {
  std::optional<engine::ViewPolicy> policy;
  if (!options.policy.empty()) {
    std::string error;
    policy = parse_policy(options.policy, error);
    if (!policy) return report(error, kExitUsage);
  }
  auto store = open_read_only(options.data);
  if (!store) return store.error();
  auto folded = fold_all(**store);
  if (!folded) return folded.error();
  const engine::HubState& state = (*folded)->state();
  const engine::ChannelEntry* channel = state.channels.find(options.channel);
  if (!channel) {
    return report("channel not found: " + options.channel, kExitNoInput);
  }
  const engine::AgentRecord* agent = state.registry.resolve(options.agent);
  if (!agent) return report("agent not found: " + options.agent, kExitNoInput);
  const std::string& agent_id = agent->agent_id();
  if (!channel->metadata.has_participant(agent_id)) {
    return report(agent->passport.name + " (" + agent_id +
                      ") is not a participant of channel " + options.channel,
                  kExitDataError);
  }
  if (!channel->adapter) {
    return report("channel " + options.channel +
                      " has no registered adapter "
                      "for type '" +
                      channel->metadata.manifest.type +
                      "'; its view cannot be rendered",
                  kExitDataError);
  }
  if (!policy) {
    policy = channel->adapter->default_view_policy(channel->metadata, agent_id);
  }
  std::vector<engine::Envelope> envelopes;
  auto read = (*store)->read_channel(
      options.channel, 1, log::kLastSequence,
      [&](std::uint64_t, std::uint64_t, std::string_view record) {
        if (auto envelope = engine::decode_envelope(record)) {
          envelopes.push_back(std::move(*envelope));
        }
        return true;
      });
  if (!read) return report(read.error());
  const std::vector<engine::ModelItem> items = engine::project(
      *policy, envelopes, agent_id, *channel->adapter,
      [&](std::string_view id) { return state.registry.name_for(id); });
  const OutputFormat format = resolve_format(options.output);
  if (format == OutputFormat::kText) {
    std::cout << "view of " << options.channel << " for "
              << name_and_id(state.registry, agent_id) << ": "
              << describe(*policy) << '\n';
    for (const engine::ModelItem& item : items) {
      std::string kind(kind_name(item.kind));
      kind.resize(10, ' ');
      std::cout << kind << one_line(item.text, 1000) << '\n';
    }
    return kExitOk;
  }
  std::cerr << "parley: view policy " << describe(*policy) << '\n';
  JsonWriter json(std::cout, format);
  for (const engine::ModelItem& item : items) {
    nlohmann::json value{{"kind", kind_name(item.kind)}, {"text", item.text}};
    if (item.kind == engine::ModelItem::Kind::kSummary) {
      value["event_count"] = item.event_count;
    }
    json.write(value);
  }
  json.finish();
  return kExitOk;
}

}  // namespace

void add_view_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ViewOptions>();
  auto* command = app.add_subcommand(
      "view",
      "Show what a participant's model would see of a channel: its envelopes "
      "as user/assistant turns (and a summary of older ones under a windowed "
      "policy), by default under the channel type's default view.\n"
      "Example: parley view --data ./parley-data "
      "18ea415ef6c1c1a0b2d3e4f5a6b7c8d9 --as bob --policy windowed:10");
  add_store_option(*command, options->data);
  command->add_option("channel", options->channel, "the channel id")
      ->required();
  command
      ->add_option("--as", options->agent,
                   "the participant (a name or an agent id)")
      ->required();
  command->add_option("--policy", options->policy,
                      "full | named | windowed:N | named-windowed:N "
                      "(default: the channel type's default view)");
  add_output_option(*command, options->output);
  command->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace parley::tools
