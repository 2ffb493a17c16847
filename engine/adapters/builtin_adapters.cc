#include "engine/adapters/builtin_adapters.h"

#include "engine/adapters/consulting.h"
#include "engine/adapters/conversation.h"
#include "engine/adapters/discussion.h"
#include "engine/adapters/workflow.h"

namespace parley::engine {

std::vector<std::shared_ptr<const ChannelAdapter>> builtin_adapters() {
  return {std::make_shared<const ConsultingAdapter>(),
          std::make_shared<const ConversationAdapter>(),
          std::make_shared<const DiscussionAdapter>(),
          std::make_shared<const WorkflowAdapter>()};
}

}  // namespace parley::engine
