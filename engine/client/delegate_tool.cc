// The `delegate` plugin tool (engine/client/network_tools.h).
#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "engine/base/event_types.h"
#include "engine/base/python_repr.h"
#include "engine/client/agent_client.h"
#include "engine/client/envelopes.h"
#include "engine/client/network_tools.h"
#include "engine/client/tool_support.h"

namespace parley::client {

namespace {

namespace net = boost::asio;
using nlohmann::json;
using tools::error_result;

// One consult, from resolving the target to its answer. Lives on the
// HubClient's strand; kept alive by the continuations, the watcher and the
// timer until it answers once.
struct Consult : std::enable_shared_from_this<Consult> {
  std::shared_ptr<AgentClient> client;
  std::string target;     // as the model named it
  std::string target_id;  // resolved
  std::string prompt;
  std::optional<std::string> capability;
  tools::Seconds timeout{300, "300.0"};
  std::int64_t depth = 1;
  std::string channel_id;
  std::unique_ptr<net::steady_timer> timer;
  Handler<ToolResult> done;
  bool answered = false;

  void answer(ToolResult result) {
    if (answered) return;
    answered = true;
    if (!channel_id.empty()) client->unwatch_channel(channel_id);
    if (timer) timer->cancel();
    done(std::move(result));
  }

  void start() {
    client->hub_client()->get_agent(
        target, [self = shared_from_this()](Result<Passport> passport) {
          if (!passport) {
            return self->answer(error_result(
                "target " + engine::python_repr(self->target) + " not found"));
          }
          if (!passport->agent_id) {
            return self->answer(error_result("target " +
                                             engine::python_repr(self->target) +
                                             " has no agent_id"));
          }
          self->target_id = *passport->agent_id;
          if (self->target_id == self->client->agent_id()) {
            return self->answer(error_result("cannot delegate to yourself"));
          }
          self->open();
        });
  }

  void open() {
    OpenRequest request{.type = "consulting", .targets = {target}};
    if (capability) {
      request.knobs_json = json{{"capability", *capability}}.dump();
    }
    client->open(std::move(request),
                 [self = shared_from_this()](Result<ChannelMetadata> channel) {
                   if (!channel) {
                     return self->answer(error_result(
                         "failed to open consulting channel", channel.error()));
                   }
                   self->ask(channel->channel_id);
                 });
  }

  // Watches the channel before posting, so no answer can slip past.
  void ask(std::string id) {
    channel_id = std::move(id);
    auto self = shared_from_this();
    client->watch_channel(
        channel_id, [self](const Envelope& envelope) { self->seen(envelope); });
    timer = std::make_unique<net::steady_timer>(
        client->hub_client()->executor(), tools::wait_duration(timeout.value));
    timer->async_wait([self](boost::system::error_code ec) {
      if (ec) return;
      self->answer(
          error_result("delegate to " + engine::python_repr(self->target) +
                       " timed out after " + self->timeout.text + "s"));
    });
    Envelope question = text_envelope(channel_id, client->agent_id(), prompt,
                                      std::vector{target_id});
    question.depth = depth;
    client->hub_client()->post_envelope(
        std::move(question), [self](Result<std::string> posted) {
          if (!posted) {
            self->answer(error_result("prompt send failed", posted.error()));
          }
        });
  }

  void seen(const Envelope& envelope) {
    if (envelope.event_type == event_type::kText &&
        envelope.sender_id == target_id) {
      return answer({.text = text_of(envelope)});
    }
    if (envelope.event_type == event_type::kChannelClosed ||
        envelope.event_type == event_type::kChannelExpired ||
        envelope.event_type == event_type::kChannelInviteReject) {
      const json data = json::parse(event_data_json(envelope), nullptr, false);
      const auto reason = data.is_object() ? data.find("reason") : data.end();
      const std::string why = reason != data.end() && reason->is_string()
                                  ? reason->get<std::string>()
                                  : envelope.event_type;
      answer(error_result("delegate to " + engine::python_repr(target) +
                          " channel closed: " + why));
    }
  }
};

}  // namespace

Tool delegate_tool() {
  ToolSchema schema{
      .name = "delegate",
      .description =
          "Open a one-shot consulting channel with a peer, ask it, and "
          "return its reply. Safe to call mid-turn in any channel.",
      .parameters =
          R"j({"type":"object","properties":{)j"
          R"j("target":{"type":"string","description":"the peer's name (or agent_id)"},)j"
          R"j("prompt":{"type":"string","description":"the question or request"},)j"
          R"j("capability":{"type":["string","null"],"description":"an optional capability tag, kept as a channel knob"},)j"
          R"j("timeout":{"type":"number","description":"seconds to wait for the reply (default 300)"}},)j"
          R"j("required":["target","prompt"]})j"};
  auto run = [](std::string arguments_json,
                const TurnDependencies& dependencies,
                Handler<ToolResult> done) {
    const json arguments = tools::parse_arguments(arguments_json);
    auto consult = std::make_shared<Consult>();
    consult->done = std::move(done);
    auto target = tools::text(arguments, "target");
    auto prompt = tools::text(arguments, "prompt");
    if (!target || !prompt) {
      return consult->answer(
          error_result("delegate requires `target` and `prompt`"));
    }
    consult->client = dependencies.agent_client;
    consult->target = std::move(*target);
    consult->prompt = std::move(*prompt);
    consult->capability = tools::text(arguments, "capability");
    consult->timeout = tools::seconds(arguments, "timeout", consult->timeout);
    if (dependencies.triggering) {
      consult->depth = dependencies.triggering->depth + 1;
    }
    consult->start();
  };
  return {std::move(schema), std::move(run)};
}

}  // namespace parley::client
