#include "engine/client/chat_completions.h"

#include <nlohmann/json.hpp>

namespace parley::client {

namespace {

using nlohmann::json;
using Role = ModelMessage::Role;

std::string_view role_name(Role role) {
  switch (role) {
    case Role::kSystem:
    case Role::kSummary:
      return "system";
    case Role::kUser:
      return "user";
    case Role::kAssistant:
      return "assistant";
    case Role::kTool:
      return "tool";
  }
  return "user";
}

json message_json(const ModelMessage& message) {
  json out = {{"role", role_name(message.role)}, {"content", message.text}};
  if (message.role == Role::kAssistant && !message.tool_calls.empty()) {
    json calls = json::array();
    for (const ToolCall& call : message.tool_calls) {
      calls.push_back(
          {{"id", call.id},
           {"type", "function"},
           {"function",
            {{"name", call.name}, {"arguments", call.arguments_json}}}});
    }
    out["tool_calls"] = std::move(calls);
    if (message.text.empty()) out["content"] = nullptr;
  }
  if (message.role == Role::kTool) out["tool_call_id"] = message.tool_call_id;
  return out;
}

json tool_json(const ToolSchema& tool) {
  json parameters = json::parse(tool.parameters, nullptr, false);
  if (parameters.is_discarded()) parameters = json::object();
  return {{"type", "function"},
          {"function",
           {{"name", tool.name},
            {"description", tool.description},
            {"parameters", std::move(parameters)}}}};
}

std::unexpected<Error> unreadable(std::string what) {
  return client_error(code::kInvalid,
                      "chat completion response: " + std::move(what));
}

}  // namespace

std::string chat_completions_body(const ModelRequest& request,
                                  const ChatCompletionsOptions& options) {
  json messages = json::array();
  for (const ModelMessage& message : request.messages) {
    messages.push_back(message_json(message));
  }
  json body = {{"model", options.model}, {"messages", std::move(messages)}};
  if (!request.tools.empty()) {
    json tools = json::array();
    for (const ToolSchema& tool : request.tools)
      tools.push_back(tool_json(tool));
    body["tools"] = std::move(tools);
  }
  if (options.temperature) body["temperature"] = *options.temperature;
  if (options.max_tokens) body["max_tokens"] = *options.max_tokens;
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<std::string> api_error_message(std::string_view body) {
  const json response = json::parse(body, nullptr, false);
  if (!response.is_object()) return std::nullopt;
  const auto error = response.find("error");
  if (error == response.end() || !error->is_object()) return std::nullopt;
  const auto message = error->find("message");
  return message != error->end() && message->is_string()
             ? message->get<std::string>()
             : error->dump();
}

Result<ModelReply> parse_chat_completion(std::string_view body) {
  if (auto message = api_error_message(body)) {
    return client_error(code::kError, std::move(*message));
  }
  const json response = json::parse(body, nullptr, false);
  if (!response.is_object()) return unreadable("not a JSON object");
  const auto choices = response.find("choices");
  if (choices == response.end() || !choices->is_array() || choices->empty() ||
      !(*choices)[0].is_object()) {
    return unreadable("no choices");
  }
  const json& choice = (*choices)[0];
  const auto message = choice.find("message");
  if (message == choice.end() || !message->is_object()) {
    return unreadable("choices[0] has no message");
  }
  ModelReply reply;
  if (const auto content = message->find("content");
      content != message->end()) {
    if (content->is_string()) {
      reply.text = content->get<std::string>();
    } else if (!content->is_null()) {
      return unreadable("message.content is neither a string nor null");
    }
  }
  const auto calls = message->find("tool_calls");
  if (calls == message->end() || calls->is_null()) return reply;
  if (!calls->is_array()) return unreadable("message.tool_calls is not a list");
  for (const json& call : *calls) {
    const auto function = call.is_object() ? call.find("function") : call.end();
    if (!call.is_object() || function == call.end() || !function->is_object() ||
        !function->contains("name") || !(*function)["name"].is_string()) {
      return unreadable("a tool call has no function name");
    }
    ToolCall parsed;
    if (const auto id = call.find("id"); id != call.end() && id->is_string()) {
      parsed.id = id->get<std::string>();
    }
    parsed.name = (*function)["name"].get<std::string>();
    if (const auto arguments = function->find("arguments");
        arguments != function->end()) {
      // Servers send the arguments as JSON text; a few send the object.
      parsed.arguments_json = arguments->is_string()
                                  ? arguments->get<std::string>()
                                  : arguments->dump();
    }
    reply.tool_calls.push_back(std::move(parsed));
  }
  return reply;
}

}  // namespace parley::client
