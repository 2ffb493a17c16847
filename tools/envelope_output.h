// One envelope as `parley log show` prints it: a readable line with names
// as text, or one stable JSON object (AG2's envelope keys plus
// "sequence", "log_sequence", "hub_authored" and "sender_name").
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "engine/base/envelope.h"
#include "engine/registry/registry.h"

namespace parley::tools {

// The header line matching envelope_line().
std::string envelope_header();
// "SEQ  CREATED  FROM  TO  EVENT  TEXT", padded to fixed widths; TEXT is
// event_data.text when it is a string, else event_data as compact JSON.
std::string envelope_line(const engine::Registry& registry,
                          const engine::Envelope& envelope);
nlohmann::json envelope_json(const engine::Registry& registry,
                             const engine::Envelope& envelope,
                             std::uint64_t log_sequence, bool hub_authored);

}  // namespace parley::tools
