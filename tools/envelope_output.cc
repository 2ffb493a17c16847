#include "tools/envelope_output.h"

#include <nlohmann/json.hpp>

#include "engine/adapters/channel_adapter.h"
#include "engine/base/flex_json.h"
#include "engine/json/records_json.h"
#include "tools/cli_output.h"

namespace parley::tools {
namespace {

std::string padded(std::string text, std::size_t width) {
  std::size_t shown = 0;
  for (char c : text) shown += (c & 0xC0) != 0x80;
  if (shown < width) text.append(width - shown, ' ');
  return text;
}

std::string row(const std::string& sequence, const std::string& created,
                const std::string& from, const std::string& to,
                const std::string& event, const std::string& text) {
  std::string line = padded(sequence, 5) + "  " + padded(created, 25) + "  " +
                     padded(one_line(from, 14), 14) + "  " +
                     padded(one_line(to, 16), 16) + "  " + padded(event, 22) +
                     "  " + text;
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace

std::string envelope_header() {
  return row("SEQ", "CREATED", "FROM", "TO", "EVENT", "TEXT");
}

std::string envelope_line(const engine::Registry& registry,
                          const engine::Envelope& envelope) {
  std::string to;
  if (!envelope.audience) {
    to = "everyone";
  } else if (envelope.audience->empty()) {
    to = "nobody";
  } else {
    for (const std::string& id : *envelope.audience) {
      if (!to.empty()) to += ",";
      to += name_of(registry, id);
    }
  }
  std::string text;
  if (auto message = engine::message_text(engine::view_of(envelope))) {
    text = *message;
  } else {
    text = engine::dump_compact(engine::flex_to_json(envelope.event_data));
  }
  return row(std::to_string(envelope.sequence), envelope.created_at,
             name_of(registry, envelope.sender_id), to, envelope.event_type,
             one_line(text, 100));
}

nlohmann::json envelope_json(const engine::Registry& registry,
                             const engine::Envelope& envelope,
                             std::uint64_t log_sequence, bool hub_authored) {
  nlohmann::json out = engine::to_json(envelope);
  out["sequence"] = envelope.sequence;
  out["log_sequence"] = log_sequence;
  out["hub_authored"] = hub_authored;
  out["sender_name"] = name_of(registry, envelope.sender_id);
  return out;
}

}  // namespace parley::tools
