// `parley log show CHANNEL`: a channel's envelopes, optionally followed
// live until Ctrl-C.
#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>

#include "engine/records/log_records.h"
#include "parley/schemas/log_generated.h"
#include "tools/cli_output.h"
#include "tools/envelope_output.h"
#include "tools/exit_codes.h"
#include "tools/inspect_commands.h"
#include "tools/read_store.h"

namespace parley::tools {
namespace {

struct LogShowOptions {
  std::filesystem::path data;
  std::string channel;
  std::optional<std::uint64_t> from;
  std::optional<std::uint64_t> to;
  std::optional<std::uint64_t> tail;
  bool follow = false;
  std::string output;
};

// Set by SIGINT/SIGTERM while following.
volatile std::sig_atomic_t interrupted = 0;
extern "C" void on_interrupt(int) { interrupted = 1; }

int run(const LogShowOptions& options) {
  const OutputFormat format = resolve_format(options.output);
  if (options.follow && format == OutputFormat::kJson) {
    return report(
        "--follow prints text or JSON lines (-o text|jsonl), not "
        "one JSON array",
        kExitUsage);
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
  std::uint64_t from = options.from.value_or(1);
  const std::uint64_t to = options.to.value_or(log::kLastSequence);
  if (options.tail) {
    const std::uint64_t last = std::min(to, channel->last_sequence);
    from = std::max(from, last >= *options.tail ? last - *options.tail + 1 : 1);
  }
  if (options.follow) {
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
  }
  JsonWriter json(std::cout, format);
  if (format == OutputFormat::kText) {
    std::cout << envelope_header() << '\n' << std::flush;
  }
  std::uint64_t next = std::max<std::uint64_t>(from, 1);
  auto print_from = [&]() -> log::Result<void> {
    return (*store)->read_channel(
        options.channel, next, to,
        [&](std::uint64_t sequence, std::uint64_t log_sequence,
            std::string_view record) {
          next = sequence + 1;
          auto envelope = engine::decode_envelope(record);
          if (!envelope) return true;
          if (format == OutputFormat::kText) {
            std::cout << envelope_line(state.registry, *envelope) << '\n'
                      << std::flush;
          } else {
            json.write(envelope_json(state.registry, *envelope, log_sequence,
                                     schema::GetRecord(record.data())
                                         ->body_as_Envelope()
                                         ->hub_authored()));
          }
          return !interrupted && std::cout;
        });
  };
  if (auto printed = print_from(); !printed) return report(printed.error());
  if (options.follow) {
    std::uint64_t seen = (*store)->last_sequence();
    while (!interrupted && std::cout && next <= to) {
      seen = (*store)->wait_for_append(seen, std::chrono::milliseconds(200));
      // Agents registered meanwhile get their names.
      if (auto advanced = (*folded)->advance(**store); !advanced) {
        return report(advanced.error());
      }
      if (auto printed = print_from(); !printed) {
        return report(printed.error());
      }
    }
  }
  json.finish();
  (void)(*store)->close();
  return kExitOk;
}

}  // namespace

void add_log_show_command(CLI::App& log, int& exit_code) {
  auto options = std::make_shared<LogShowOptions>();
  auto* command = log.add_subcommand(
      "show",
      "Show a channel's envelopes in order: a table with names, or one JSON "
      "object per line with its per-channel \"sequence\". --follow keeps "
      "printing what a live hub appends until Ctrl-C.\n"
      "Example: parley log show --data ./parley-data "
      "18ea415ef6c1c1a0b2d3e4f5a6b7c8d9 --tail 20 -f");
  add_store_option(*command, options->data);
  command->add_option("channel", options->channel, "the channel id")
      ->required();
  command->add_option("--from", options->from,
                      "the first per-channel sequence to show");
  command->add_option("--to", options->to,
                      "the last per-channel sequence to show");
  command->add_option("--tail", options->tail,
                      "only the last N envelopes (of those up to --to)");
  command->add_flag("-f,--follow", options->follow,
                    "keep printing envelopes as they are appended, until "
                    "Ctrl-C");
  add_output_option(*command, options->output);
  command->callback([options, &exit_code] { exit_code = run(*options); });
}

}  // namespace parley::tools
