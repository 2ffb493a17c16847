#include "engine/client/tool_support.h"

#include <algorithm>

#include "engine/base/python_repr.h"

namespace parley::client::tools {

using nlohmann::json;

json parse_arguments(std::string_view arguments_json) {
  json arguments = json::parse(arguments_json, nullptr, false);
  return arguments.is_object() ? arguments : json::object();
}

std::optional<std::string> text(const json& arguments, std::string_view key) {
  const auto found = arguments.find(key);
  if (found == arguments.end() || !found->is_string()) return std::nullopt;
  return found->get<std::string>();
}

std::int64_t integer(const json& arguments, std::string_view key,
                     std::int64_t fallback) {
  const auto found = arguments.find(key);
  if (found == arguments.end() || !found->is_number_integer()) return fallback;
  return found->get<std::int64_t>();
}

Seconds seconds(const json& arguments, std::string_view key, Seconds fallback) {
  const auto found = arguments.find(key);
  if (found == arguments.end() || !found->is_number() ||
      !(found->get<double>() >= 0)) {
    return fallback;
  }
  return {found->get<double>(), found->dump()};
}

const json& member(const json& object, std::string_view key) {
  static const json null;
  const auto found = object.is_object() ? object.find(key) : object.end();
  return found == object.end() ? null : *found;
}

json or_null(const std::optional<std::string>& text) {
  return text ? json(*text) : json(nullptr);
}

ToolResult json_result(const json& value) {
  return {.text = value.dump(-1, ' ', false, json::error_handler_t::replace)};
}

ToolResult error_result(std::string_view message) {
  return {.text = "Error: " + std::string(message)};
}

ToolResult error_result(std::string_view what, const Error& error) {
  return error_result(std::string(what) + ": " + error.message);
}

void dispatch(
    std::string_view arguments_json, const TurnDependencies& dependencies,
    Handler<ToolResult> done,
    std::initializer_list<std::pair<std::string_view, Action>> actions) {
  const json arguments = parse_arguments(arguments_json);
  const std::string action = text(arguments, "action").value_or("");
  std::string names;
  for (const auto& [name, run] : actions) {
    if (name == action) return run(arguments, dependencies, std::move(done));
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  done(error_result("unknown action " + engine::python_repr(action) +
                    "; choose from " + names));
}

std::chrono::steady_clock::duration wait_duration(double seconds) {
  constexpr double kLongestWait = 1e8;
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::min(seconds, kLongestWait)));
}

json json_field(std::string_view json_text) {
  if (json_text.empty()) return nullptr;
  json value = json::parse(json_text, nullptr, false);
  return value.is_discarded() ? json(nullptr) : value;
}

}  // namespace parley::client::tools
