// The `say` adapter tool's dispatch (engine/client/tools.h).
#include <nlohmann/json.hpp>

#include "engine/client/agent_client.h"
#include "engine/client/tools.h"

namespace parley::client {

namespace {

using nlohmann::json;

// A say in progress: audience names resolved to ids so far.
struct Saying {
  std::shared_ptr<HubClient> hub;
  std::string channel_id;
  std::string sender_id;
  std::string content;
  std::optional<std::vector<std::string>> names;
  std::vector<std::string> ids;
  Handler<ToolResult> done;
};

ToolResult error_result(const Error& error) {
  return {.text = "error: " + error.code + ": " + error.message};
}

void continue_saying(std::shared_ptr<Saying> saying) {
  if (saying->names && saying->ids.size() < saying->names->size()) {
    const std::string name = (*saying->names)[saying->ids.size()];
    saying->hub->get_agent(name, [saying](Result<Passport> passport) {
      if (!passport) return saying->done(error_result(passport.error()));
      saying->ids.push_back(passport->agent_id.value_or(""));
      continue_saying(saying);
    });
    return;
  }
  std::optional<std::vector<std::string>> audience;
  if (saying->names) audience = std::move(saying->ids);
  saying->hub->post_envelope(
      engine::build_text_envelope(saying->channel_id, saying->sender_id,
                                  saying->content, std::move(audience)),
      [saying](Result<std::string> posted) {
        if (!posted) return saying->done(error_result(posted.error()));
        saying->done(ToolResult{.text = "posted " + *posted});
      });
}

}  // namespace

ToolFunction say_function() {
  return [](std::string arguments_json, const TurnDependencies& dependencies,
            Handler<ToolResult> done) {
    const json arguments = json::parse(arguments_json, nullptr, false);
    const auto content =
        arguments.is_object() ? arguments.find("content") : arguments.end();
    if (!arguments.is_object() || content == arguments.end() ||
        !content->is_string()) {
      return done(ToolResult{.text = "error: say needs a string 'content'"});
    }
    auto saying = std::make_shared<Saying>();
    saying->hub = dependencies.hub;
    saying->sender_id = dependencies.agent_client->agent_id();
    saying->content = content->get<std::string>();
    saying->done = std::move(done);
    const auto channel = arguments.find("channel_id");
    if (channel != arguments.end() && channel->is_string()) {
      saying->channel_id = channel->get<std::string>();
    } else if (dependencies.channel) {
      saying->channel_id = dependencies.channel->channel_id;
    }
    const auto audience = arguments.find("audience");
    if (audience != arguments.end() && audience->is_array()) {
      saying->names.emplace();
      for (const json& name : *audience) {
        if (!name.is_string()) {
          return saying->done(
              ToolResult{.text = "error: say's audience must be names"});
        }
        saying->names->push_back(name.get<std::string>());
      }
    }
    continue_saying(saying);
  };
}

}  // namespace parley::client
