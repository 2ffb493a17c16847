// Who may see an envelope (AG2's `visible_to`): what views and client
// tools filter on. Delivery (the dispatch set) is a different rule.
#pragma once

#include <algorithm>
#include <string_view>

#include "engine/base/envelope.h"

namespace parley::engine {

// The sender always sees its own envelope; a null audience is visible to
// everyone; otherwise only the listed ids see it. Channel membership is not
// checked.
inline bool visible_to(const Envelope& envelope,
                       std::string_view participant_id) {
  if (envelope.sender_id == participant_id) return true;
  if (!envelope.audience) return true;
  return std::ranges::find(*envelope.audience, participant_id) !=
         envelope.audience->end();
}

}  // namespace parley::engine
