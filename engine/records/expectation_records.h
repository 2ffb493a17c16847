// The ExpectationFired log record (schemas/log.fbs): its builder and its
// decoded form, read by the fold (engine/state/hub_state.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace parley::engine {

struct ExpectationFiring {
  std::string channel_id;
  std::uint32_t index = 0;  // position in the manifest's expectations
  std::string expectation;  // its name
  std::string on_violation;
  std::string violator;  // "" = channel-wide
  std::string at;        // hub clock string
  bool hides_violator = false;
};

// A finished Record with zero sequences, ready for LogStore::append.
std::string expectation_fired_record(const ExpectationFiring& firing);

}  // namespace parley::engine
