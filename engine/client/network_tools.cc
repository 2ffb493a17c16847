#include "engine/client/network_tools.h"

namespace parley::client {

std::vector<Tool> network_tools() {
  return {delegate_tool(), peers_tool(), channels_tool(), tasks_tool(),
          context_tool()};
}

}  // namespace parley::client
