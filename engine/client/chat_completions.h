// The OpenAI-compatible chat-completions API as the model seam speaks it:
// a ModelRequest as the JSON body of POST /chat/completions, and the
// response's first choice as a ModelReply. Pure: no I/O (the HTTP exchange
// is ChatCompletionsModel's).
//
// Mapping (request): kSystem -> "system"; kSummary -> "system" (the note
// that earlier history is not shown); kUser -> "user"; kAssistant ->
// "assistant" with "tool_calls" [{id, type "function", function {name,
// arguments}}] when it has any (content null when its text is empty);
// kTool -> "tool" with "tool_call_id". Tools -> "tools" [{type
// "function", function {name, description, parameters}}], left out when
// there are none.
//
// Mapping (response): choices[0].message: "content" (a string, or null
// read as "") and "tool_calls" of type "function" (arguments kept as the
// JSON text the server sent). Anything else is an error naming what is
// missing; an {"error": {"message": ...}} body is that message.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "engine/client/error.h"
#include "engine/client/model.h"

namespace parley::client {

struct ChatCompletionsOptions {
  // The API's base URL, up to but not including /chat/completions:
  // http://127.0.0.1:8000/v1 (vLLM, llama.cpp's server, Ollama's
  // OpenAI-compatible endpoint, ...) or https://….
  std::string base_url;
  // https://: the PEM file of the CAs that may sign the server's
  // certificate; none: the system's trusted CAs.
  std::optional<std::filesystem::path> tls_ca_file;
  std::string model;    // the body's "model"
  std::string api_key;  // sent as "Authorization: Bearer <key>"; empty: none
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  // The whole exchange (connect, send, read), per model call.
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
};

// The request body, as JSON text.
std::string chat_completions_body(const ModelRequest& request,
                                  const ChatCompletionsOptions& options);

// The message of an {"error": {"message": ...}} body, if it is one.
std::optional<std::string> api_error_message(std::string_view body);

// The reply in a response body; kInvalid naming what the body lacks.
Result<ModelReply> parse_chat_completion(std::string_view body);

}  // namespace parley::client
