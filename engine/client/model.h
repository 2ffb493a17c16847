// The model seam: what an AgentClient asks of an LLM for one step of a turn,
// and what it gets back. An embedder implements Model for any LLM (a
// chat-completions HTTP API, a local runtime, a test script); the client
// runs the tool loop around it (engine/client/default_handler.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/adapters/round.h"
#include "engine/client/error.h"

namespace parley::client {

// A tool as the model sees it: name, description, JSON Schema parameters.
using ToolSchema = engine::ToolOffer;

// One tool call the model asks for. `id` pairs it with its result message.
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments_json = "{}";  // a JSON object

  bool operator==(const ToolCall&) const = default;
};

// One entry of the history given to the model.
struct ModelMessage {
  enum class Role {
    kSystem,     // instructions
    kSummary,    // a view's compaction note (AG2's CompactionSummary)
    kUser,       // others' messages, and the turn's prompt
    kAssistant,  // the agent's own messages; may carry tool_calls
    kTool,       // a tool's result, answering tool_call_id
  };

  Role role = Role::kUser;
  std::string text;
  std::vector<ToolCall> tool_calls;  // kAssistant only
  std::string tool_call_id;          // kTool only
  std::string tool_name;             // kTool only
  std::size_t event_count = 0;       // kSummary: envelopes it stands for

  bool operator==(const ModelMessage&) const = default;
};

struct ModelRequest {
  // System message first, then the view's history, then the prompt, then
  // any tool calls and results of this turn so far.
  std::vector<ModelMessage> messages;
  std::vector<ToolSchema> tools;
};

// A reply with tool_calls asks the client to run them and call the model
// again with their results; a reply without is the turn's final answer.
struct ModelReply {
  std::string text;
  std::vector<ToolCall> tool_calls;
};

class Model {
 public:
  virtual ~Model() = default;
  // Answers `request` once through `done`, from any thread, inline or
  // later (the client moves the answer onto its strand). An error fails
  // the turn: the client reports a turn failure and posts nothing.
  virtual void complete(ModelRequest request, Handler<ModelReply> done) = 0;
};

}  // namespace parley::client
