// The `channels` plugin tool (engine/client/network_tools.h).
#include <limits>

#include "engine/base/python_repr.h"
#include "engine/client/agent_client.h"
#include "engine/client/network_tools.h"
#include "engine/client/tool_support.h"
#include "engine/json/records_json.h"

namespace parley::client {

namespace {

using nlohmann::json;
using tools::error_result;

json participant_ids(const ChannelMetadata& metadata) {
  json ids = json::array();
  for (const auto& participant : metadata.participants) {
    ids.push_back(participant.agent_id);
  }
  return ids;
}

// AG2's _metadata_dict.
json metadata_json(const ChannelMetadata& metadata) {
  json participants = json::array();
  for (const auto& p : metadata.participants) {
    participants.push_back(
        {{"agent_id", p.agent_id}, {"role", p.role}, {"order", p.order}});
  }
  json expectations = json::array();
  for (const auto& e : metadata.manifest.expectations) {
    expectations.push_back({{"name", e.name},
                            {"on_violation", e.on_violation},
                            {"params", tools::json_field(e.params)}});
  }
  return {{"channel_id", metadata.channel_id},
          {"type", metadata.manifest.type},
          {"version", metadata.manifest.version},
          {"state", engine::to_string(metadata.state)},
          {"creator_id", metadata.creator_id},
          {"participants", std::move(participants)},
          {"knobs", tools::json_field(metadata.knobs)},
          {"labels", tools::json_field(metadata.labels)},
          {"expectations", std::move(expectations)},
          {"created_at", metadata.created_at},
          {"expires_at", tools::or_null(metadata.expires_at)},
          {"closed_at", tools::or_null(metadata.closed_at)},
          {"close_reason", metadata.close_reason}};
}

void list(const json& arguments, const TurnDependencies& dependencies,
          Handler<ToolResult> done) {
  const bool all = tools::text(arguments, "state") == "all";
  const json params{{"agent_id", dependencies.agent_client->agent_id()},
                    {"limit", std::numeric_limits<std::int32_t>::max()}};
  dependencies.agent_client->hub_client()->call(
      "list_channels", params.dump(),
      [all, done = std::move(done)](Result<std::string> listed) {
        if (!listed) return done(error_result("list failed", listed.error()));
        json out = json::array();
        for (const json& item : json::parse(*listed, nullptr, false)) {
          auto metadata = engine::channel_metadata_from_json(item);
          if (!metadata) continue;
          if (!all && engine::is_terminal(metadata->state)) continue;
          out.push_back({{"channel_id", metadata->channel_id},
                         {"type", metadata->manifest.type},
                         {"state", engine::to_string(metadata->state)},
                         {"participants", participant_ids(*metadata)}});
        }
        done(tools::json_result(out));
      });
}

// The model's ttl: "30m", "2h", or seconds.
std::optional<engine::DurationSpec> ttl_of(const json& arguments) {
  const auto ttl = arguments.find("ttl");
  if (ttl == arguments.end()) return std::nullopt;
  if (ttl->is_string()) return ttl->get<std::string>();
  if (ttl->is_number_integer()) return ttl->get<std::int64_t>();
  return std::nullopt;
}

void open(const json& arguments, const TurnDependencies& dependencies,
          Handler<ToolResult> done) {
  const auto type = tools::text(arguments, "type");
  std::vector<std::string> targets;
  if (const auto target = arguments.find("target"); target != arguments.end()) {
    if (target->is_string()) targets.push_back(target->get<std::string>());
    if (target->is_array()) {
      for (const json& name : *target) {
        if (name.is_string()) targets.push_back(name.get<std::string>());
      }
    }
  }
  if (!type || type->empty() || targets.empty()) {
    return done(error_result("open requires `type` and `target`"));
  }
  OpenRequest request{.type = *type, .targets = std::move(targets)};
  if (const auto knobs = arguments.find("knobs");
      knobs != arguments.end() && knobs->is_object()) {
    request.knobs_json = knobs->dump();
  }
  request.intent = tools::text(arguments, "intent");
  request.ttl = ttl_of(arguments);
  auto client = dependencies.agent_client;
  client->open(std::move(request), [client, type = *type,
                                    message = tools::text(arguments, "message"),
                                    done = std::move(done)](
                                       Result<ChannelMetadata> channel) {
    if (!channel) return done(error_result("open failed", channel.error()));
    json result{{"channel_id", channel->channel_id},
                {"type", type},
                {"participants", participant_ids(*channel)}};
    if (!message || message->empty()) return done(tools::json_result(result));
    client->send(channel->channel_id, *message,
                 [client, id = channel->channel_id, result,
                  done](Result<std::string> seeded) mutable {
                   if (seeded) {
                     result["seed_envelope_id"] = *seeded;
                     return done(tools::json_result(result));
                   }
                   // A failed seed must not leave an open channel nobody speaks
                   // in.
                   client->hub_client()->close_channel(
                       id, "seed_failed",
                       [done, error = seeded.error()](Result<ChannelMetadata>) {
                         done(error_result("seed send failed", error));
                       });
                 });
  });
}

void info(const json& arguments, const TurnDependencies& dependencies,
          Handler<ToolResult> done) {
  const auto channel_id = tools::text(arguments, "channel_id");
  if (!channel_id || channel_id->empty()) {
    return done(error_result("info requires `channel_id`"));
  }
  dependencies.agent_client->hub_client()->get_channel(
      *channel_id,
      [me = dependencies.agent_client->agent_id(), id = *channel_id,
       done = std::move(done)](Result<ChannelMetadata> metadata) {
        if (!metadata) {
          return done(error_result("channel " + engine::python_repr(id) +
                                   " not found"));
        }
        if (!metadata->has_participant(me)) {
          return done(error_result("not a participant of channel " +
                                   engine::python_repr(id)));
        }
        done(tools::json_result(metadata_json(*metadata)));
      });
}

void close(const json& arguments, const TurnDependencies& dependencies,
           Handler<ToolResult> done) {
  std::string channel_id = tools::text(arguments, "channel_id").value_or("");
  if (channel_id.empty() && dependencies.channel) {
    channel_id = dependencies.channel->channel_id;
  }
  if (channel_id.empty()) {
    return done(
        error_result("close requires `channel_id` or an active channel"));
  }
  dependencies.agent_client->hub_client()->close_channel(
      channel_id, "closed_by_agent",
      [channel_id, done = std::move(done)](Result<ChannelMetadata> closed) {
        if (!closed) return done(error_result("close failed", closed.error()));
        done(tools::json_result({{"channel_id", channel_id},
                                 {"state", engine::to_string(closed->state)},
                                 {"close_reason", closed->close_reason}}));
      });
}

}  // namespace

Tool channels_tool() {
  ToolSchema schema{
      .name = "channels",
      .description =
          "Channel lifecycle. list: state=active|all. open: type, target, "
          "knobs?, intent?, ttl?, message? (sent as your first message once "
          "the channel is open). info: channel_id. close: channel_id? "
          "(default: this channel).",
      .parameters =
          R"j({"type":"object","properties":{)j"
          R"j("action":{"type":"string","enum":["list","open","info","close"]},)j"
          R"j("type":{"type":["string","null"],"description":"open: the channel type (consulting, conversation, discussion, workflow)"},)j"
          R"j("target":{"type":["string","array","null"],"items":{"type":"string"},"description":"open: the peer's name, or a list of names"},)j"
          R"j("knobs":{"type":["object","null"],"description":"open: the channel type's knobs"},)j"
          R"j("intent":{"type":["string","null"]},)j"
          R"j("ttl":{"type":["string","integer","null"],"description":"open: e.g. \"30m\", \"2h\", or seconds"},)j"
          R"j("message":{"type":["string","null"],"description":"open: a first message to send"},)j"
          R"j("channel_id":{"type":["string","null"]},)j"
          R"j("state":{"type":"string","enum":["active","all"],"description":"list: default active"}},)j"
          R"j("required":["action"]})j"};
  auto run = [](std::string arguments_json,
                const TurnDependencies& dependencies,
                Handler<ToolResult> done) {
    tools::dispatch(
        arguments_json, dependencies, std::move(done),
        {{"list", list}, {"open", open}, {"info", info}, {"close", close}});
  };
  return {std::move(schema), std::move(run)};
}

}  // namespace parley::client
