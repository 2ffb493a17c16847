// The folded record of expectation firings (schemas/log.fbs
// ExpectationFired): which (expectation index, violator) keys have fired in
// each channel, so a key fires at most once in a channel's life, restarts
// included; and when a `hide` firing last moved a channel's turn.
//
// Thread safety: none; the hub guards it with its state.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace parley::engine {

class ExpectationLedger {
 public:
  // `violator` "" = a channel-wide violation. `at` is the hub clock string
  // of the firing.
  void record(std::string_view channel_id, std::uint32_t index,
              std::string_view violator, std::string_view at, bool hid);

  bool has_fired(std::string_view channel_id, std::uint32_t index,
                 std::string_view violator) const;
  // The `at` of the channel's latest hiding firing, if any.
  std::optional<std::string> turn_moved_at(std::string_view channel_id) const;

 private:
  struct Channel {
    std::set<std::pair<std::uint32_t, std::string>, std::less<>> fired;
    std::optional<std::string> turn_moved_at;
  };
  std::map<std::string, Channel, std::less<>> channels_;
};

}  // namespace parley::engine
