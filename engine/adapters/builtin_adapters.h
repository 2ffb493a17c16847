// The four adapters every hub registers at start: consulting,
// conversation, discussion and workflow, each version 1.
#pragma once

#include <memory>
#include <vector>

#include "engine/adapters/channel_adapter.h"

namespace parley::engine {

// consulting, conversation, discussion and workflow, each version 1, in
// that order. The workflow adapter resolves graphs through
// TransitionRegistry::builtin().
std::vector<std::shared_ptr<const ChannelAdapter>> builtin_adapters();

}  // namespace parley::engine
