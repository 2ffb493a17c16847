// What an adapter's client-side helpers work with (ChannelAdapter::tools_for,
// build_round_envelope): the tools an adapter offers a participant's model
// for one turn, and what the model produced in that turn. Plain data; the
// client (engine/client/) runs the model and the tools.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/base/json_text.h"

namespace parley::engine {

// A tool offered to a model: its name, what it is for, and its parameters
// as a JSON Schema object (compact JSON text).
struct ToolOffer {
  std::string name;
  std::string description;
  JsonText parameters = R"({"type":"object","properties":{}})";

  bool operator==(const ToolOffer&) const = default;
};

// A tool result that hands the workflow's next turn to `target` (an agent
// id: the caller resolves names first).
struct Handoff {
  std::string target;
  std::string reason;
};

// A tool result that ends a workflow.
struct Finish {
  std::string reason = "finished";
  std::string summary;
};

// One tool call the model made during the turn, in emission order.
struct ToolCallOutcome {
  std::string name;
  JsonText arguments = "{}";  // a JSON object
  std::optional<Handoff> handoff;
  std::optional<Finish> finish;
};

// The model's final reply of a turn: its text and the tool calls made on
// the way.
struct RoundReply {
  std::string body;
  std::vector<ToolCallOutcome> tool_calls;
};

// The built-in adapter tool: post an `ag2.msg.text` into the current channel
// (or another the agent participates in). Parameters: content (string,
// required), audience (list of names, optional), channel_id (optional).
inline constexpr std::string_view kSayTool = "say";
ToolOffer say_tool();

}  // namespace parley::engine
