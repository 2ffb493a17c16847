// Tools an AgentClient's model may call during a turn, and what a tool gets
// beside the model's arguments: the turn's dependencies (AG2's CHANNEL_DEP,
// CHANNEL_STATE_DEP, AGENT_CLIENT_DEP, HUB_DEP, TASK_DEP), which the model
// never sees.
//
// Threading: a ToolFunction is called on the HubClient's strand and must
// not block it; `done` may be called from any thread, once.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "engine/adapters/channel_adapter.h"
#include "engine/channels/channel.h"
#include "engine/client/error.h"
#include "engine/client/model.h"

namespace parley::client {

class AgentClient;
class HubClient;
class Task;

// What stamp_dependencies builds for one turn. Everything is kept alive for
// as long as the struct is.
struct TurnDependencies {
  std::shared_ptr<const engine::ChannelMetadata> channel;     // CHANNEL_DEP
  std::shared_ptr<const engine::AdapterState> channel_state;  // folded
  std::shared_ptr<const engine::ChannelAdapter> adapter;      // its adapter
  std::shared_ptr<AgentClient> agent_client;  // AGENT_CLIENT_DEP
  std::shared_ptr<HubClient> hub;             // HUB_DEP
  // TASK_DEP: the task the turn runs under (engine/client/task.h), if any.
  std::shared_ptr<Task> task;
  // The envelope the turn answers.
  std::optional<engine::Envelope> triggering;
};

// What a tool returns: the text the model is shown, and for a workflow
// routing tool a Handoff (target: a name or an agent id) or a Finish, which
// the round-end packet carries (engine::WorkflowAdapter).
struct ToolResult {
  std::string text;
  std::optional<engine::Handoff> handoff;
  std::optional<engine::Finish> finish;
};

using ToolFunction =
    std::function<void(std::string arguments_json, const TurnDependencies&,
                       Handler<ToolResult> done)>;

struct Tool {
  ToolSchema schema;
  ToolFunction run;
};

// The adapter tool `say` (engine::say_tool()): posts an `ag2.msg.text` with
// `content` into `channel_id` (default: the turn's channel), to `audience`
// (peer names or ids, resolved with get_agent; default: everyone). The model
// is shown "posted <envelope id>", or the hub's error as "error: <code>:
// <message>" (the tool never fails the turn). Posting with `say` and also
// replying with a non-empty body sends two envelopes in one turn; on a
// consulting channel the second is refused ("channel '<id>' is closed").
ToolFunction say_function();

}  // namespace parley::client
