#include "engine/expectations/expectation_ledger.h"

namespace parley::engine {

void ExpectationLedger::record(std::string_view channel_id, std::uint32_t index,
                               std::string_view violator, std::string_view at,
                               bool hid) {
  auto it = channels_.find(channel_id);
  if (it == channels_.end()) {
    it = channels_.emplace(std::string(channel_id), Channel{}).first;
  }
  it->second.fired.emplace(index, std::string(violator));
  if (hid) it->second.turn_moved_at = std::string(at);
}

bool ExpectationLedger::has_fired(std::string_view channel_id,
                                  std::uint32_t index,
                                  std::string_view violator) const {
  auto it = channels_.find(channel_id);
  return it != channels_.end() &&
         it->second.fired.contains(std::pair{index, std::string(violator)});
}

std::optional<std::string> ExpectationLedger::turn_moved_at(
    std::string_view channel_id) const {
  auto it = channels_.find(channel_id);
  if (it == channels_.end()) return std::nullopt;
  return it->second.turn_moved_at;
}

}  // namespace parley::engine
