// Hub-minted identifiers, as AG2's: 32 lowercase hex characters, the first
// 16 the wall clock in nanoseconds since the epoch (big-endian), the last 16
// random.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace parley::engine {

// True for exactly 32 lowercase hex characters: the shape of every id the
// hub mints, which a registered name may not have.
bool has_id_shape(std::string_view text);

// A fresh unique id for an agent, channel or endpoint; only roughly time
// ordered. Thread-safe.
std::string new_id();

// Envelope ids: strictly increasing in mint order, even when the wall clock
// steps back, because the time part is clamped to max(now, last + 1).
// Parley seeds the floor from the largest id in the log at open (AG2 does
// not), so ids keep increasing across restarts. Thread-safe.
class EnvelopeIdMinter {
 public:
  EnvelopeIdMinter() = default;
  EnvelopeIdMinter(const EnvelopeIdMinter&) = delete;
  EnvelopeIdMinter& operator=(const EnvelopeIdMinter&) = delete;

  // Raises the floor so later ids sort above `id`; ignores ids that are not
  // hub-shaped.
  void observe(std::string_view id);
  std::string mint();

 private:
  // The largest time part minted or observed. Ids need no order with other
  // memory, only among themselves: relaxed compare-exchange suffices.
  std::atomic<std::uint64_t> last_nanos_ = 0;
};

}  // namespace parley::engine
