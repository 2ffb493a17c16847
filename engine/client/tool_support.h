// What the plugin tools (engine/client/network_tools.h) share: reading the
// model's arguments and writing what the model is shown. Included only by
// the tools' sources.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "engine/client/error.h"
#include "engine/client/tools.h"

namespace parley::client::tools {

// The model's arguments as an object; anything else reads as {}.
nlohmann::json parse_arguments(std::string_view arguments_json);

// The string at `key`; nullopt when absent, null or not a string.
std::optional<std::string> text(const nlohmann::json& arguments,
                                std::string_view key);
// The integer at `key`, else `fallback`.
std::int64_t integer(const nlohmann::json& arguments, std::string_view key,
                     std::int64_t fallback);

// A duration the model gave in seconds, and its text as Python prints the
// number ("300.0" for a float, "5" for an int) for AG2's messages.
struct Seconds {
  double value;
  std::string text;
};
// The number at `key` when it is >= 0, else `fallback`.
Seconds seconds(const nlohmann::json& arguments, std::string_view key,
                Seconds fallback);

// object[key] of a value read from the hub; null when absent or when
// `object` is not an object.
const nlohmann::json& member(const nlohmann::json& object,
                             std::string_view key);
// The text, or null.
nlohmann::json or_null(const std::optional<std::string>& text);

// A list or object shown to the model: compact JSON.
ToolResult json_result(const nlohmann::json& value);
// AG2's failure text: "Error: <message>".
ToolResult error_result(std::string_view message);
// "Error: <what>: <the error's message>".
ToolResult error_result(std::string_view what, const Error& error);

// One action of a grouped tool: its arguments, the turn, and where its
// answer goes.
using Action = void (*)(const nlohmann::json& arguments,
                        const TurnDependencies& dependencies,
                        Handler<ToolResult> done);

// Runs the action `arguments_json` names under "action"; any other is
// AG2's "Error: unknown action '<a>'; choose from <names, in order>".
void dispatch(
    std::string_view arguments_json, const TurnDependencies& dependencies,
    Handler<ToolResult> done,
    std::initializer_list<std::pair<std::string_view, Action>> actions);

// `seconds` as a timer's duration, at most about three years (a
// steady_timer's duration must not overflow).
std::chrono::steady_clock::duration wait_duration(double seconds);

// A JSON text field (knobs, labels, params) as a value; null when empty or
// not JSON.
nlohmann::json json_field(std::string_view json_text);

}  // namespace parley::client::tools
