#include "engine/client/default_handler.h"

#include <boost/asio/post.hpp>

#include "engine/base/event_types.h"
#include "engine/client/envelopes.h"
#include "engine/client/hooks.h"
#include "engine/client/network_tools.h"

namespace parley::client {

namespace net = boost::asio;

namespace {

using engine::AdapterState;
using engine::ChannelAdapter;

// One substantive turn, from get_channel to the round-end post. Every step
// runs on the HubClient's strand; the Turn keeps itself alive through the
// continuations it hands out.
class Turn : public std::enable_shared_from_this<Turn> {
 public:
  Turn(std::shared_ptr<AgentClient> client, Envelope trigger,
       Handler<void> done, std::shared_ptr<Task> task)
      : client_(std::move(client)),
        hub_(client_->hub_client()),
        trigger_(std::move(trigger)),
        done_(std::move(done)),
        task_(std::move(task)) {}

  void start() {
    hub_->get_channel(trigger_.channel_id,
                      then<ChannelMetadata>([](Turn& self, auto metadata) {
                        self.on_channel(std::move(metadata));
                      }));
  }

 private:
  // A continuation: on success `next(*this, value)`, else fail().
  template <typename T, typename Next>
  Handler<T> then(Next next) {
    return [self = shared_from_this(), next](Result<T> result) {
      resume(*self, result, next);
    };
  }

  // Out of line: GCC 12 inlining a read through std::expected's storage
  // reports a false maybe-uninitialized.
  template <typename T, typename Next>
  [[gnu::noinline]] static void resume(Turn& self, Result<T>& result,
                                       const Next& next) {
    if (!result) return self.fail(std::move(result.error()));
    next(self, std::move(*result));
  }

  const std::string& me() const { return client_->agent_id(); }

  void on_channel(ChannelMetadata metadata) {
    if (metadata.state != engine::ChannelState::kActive) return skip();
    auto adapter = adapter_for(*client_, metadata);
    if (!adapter) return fail(adapter.error());
    adapter_ = std::move(*adapter);
    metadata_ = std::make_shared<const ChannelMetadata>(std::move(metadata));
    hub_->find_envelope_by_causation(
        trigger_.channel_id, me(), trigger_.envelope_id,
        then<std::optional<Envelope>>([](Turn& self, auto answered) {
          if (answered) return self.skip();  // a redelivery, answered
          self.hub_->can_send(
              self.trigger_.channel_id, self.me(),
              self.then<bool>([](Turn& self, bool may) {
                if (!may) return self.skip();
                self.read_channel([](Turn& self) { self.prepare(); });
              }));
        }));
  }

  // read_wal, then the state folded from it; then `next`.
  void read_channel(void (*next)(Turn&)) {
    hub_->read_wal(trigger_.channel_id,
                   then<std::vector<Envelope>>([next](Turn& self, auto wal) {
                     auto state =
                         fold_channel(*self.adapter_, *self.metadata_, wal);
                     if (!state) return self.fail(state.error());
                     self.wal_ = std::move(wal);
                     self.state_ = std::move(*state);
                     next(self);
                   }));
  }

  void prepare() {
    std::vector<std::string> ids;
    for (const auto& participant : metadata_->participants) {
      ids.push_back(participant.agent_id);
    }
    hub_->names_for(std::move(ids), then<std::map<std::string, std::string>>(
                                        [](Turn& self, auto names) {
                                          self.names_ = std::move(names);
                                          self.project();
                                        }));
  }

  void project() {
    auto view = resolve_view_policy(*client_, *metadata_);
    if (!view) return fail(view.error());
    const ViewContext context = ViewContext::for_adapter(
        *adapter_, [names = names_](std::string_view id) {
          const auto found = names.find(std::string(id));
          return found == names.end() ? std::string(id) : found->second;
        });
    const std::vector<Envelope> history =
        slice_until(wal_, trigger_.envelope_id);
    const std::vector<ModelItem> items =
        (*view)->project(history, me(), *metadata_, context);
    std::optional<std::string> prompt;
    for (const ModelItem& item :
         (*view)->project(std::span(&trigger_, 1), me(), *metadata_, context)) {
      if (item.kind != ModelItem::Kind::kSummary) prompt = item.text;
    }
    if (!prompt || prompt->empty()) {
      prompt = adapter_->extract_turn_input(engine::view_of(trigger_));
    }
    if (!prompt || prompt->empty()) return skip();

    dependencies_ =
        stamp_dependencies(*client_, metadata_, state_, trigger_, task_);
    offer_tools();

    std::string system =
        "You are " + client_->passport().name + " (agent_id: " + me() + ").";
    if (!client_->options().instructions.empty()) {
      system += "\n\n" + client_->options().instructions;
    }
    request_.messages.push_back(
        {.role = ModelMessage::Role::kSystem, .text = std::move(system)});
    for (ModelMessage& message : to_model_messages(items)) {
      request_.messages.push_back(std::move(message));
    }
    request_.messages.push_back(
        {.role = ModelMessage::Role::kUser, .text = std::move(*prompt)});
    call_model();
  }

  // The adapter's tools for this turn (say is run by say_function; another
  // adapter tool by the agent's own tool of that name), then the agent's
  // own, then the plugin's (a name offered earlier wins).
  void offer_tools() {
    const AgentOptions& options = client_->options();
    auto own = [&](std::string_view name) -> const Tool* {
      for (const Tool& tool : options.tools) {
        if (tool.schema.name == name) return &tool;
      }
      return nullptr;
    };
    for (engine::ToolOffer& offer :
         adapter_->tools_for(*metadata_, *state_, me())) {
      if (offer.name == engine::kSayTool) {
        tools_.push_back({std::move(offer), say_function()});
      } else if (const Tool* tool = own(offer.name)) {
        tools_.push_back({std::move(offer), tool->run});
      } else {
        hub_->log("adapter tool '" + offer.name + "' of channel type '" +
                  metadata_->manifest.type +
                  "' has no implementation on this client; not offered");
      }
    }
    auto offer = [&](const Tool& tool) {
      const bool offered = std::ranges::any_of(tools_, [&](const Tool& t) {
        return t.schema.name == tool.schema.name;
      });
      if (!offered) tools_.push_back(tool);
    };
    for (const Tool& tool : options.tools) offer(tool);
    if (options.attach_plugin) {
      static const std::vector<Tool> plugin = network_tools();
      for (const Tool& tool : plugin) offer(tool);
    }
    for (const Tool& tool : tools_) request_.tools.push_back(tool.schema);
  }

  void call_model() {
    ++model_calls_;
    auto self = shared_from_this();
    client_->model().complete(
        request_, [self, strand = hub_->executor()](Result<ModelReply> reply) {
          net::post(strand, [self, reply = std::move(reply)]() mutable {
            if (!reply) return self->fail(std::move(reply.error()));
            self->on_reply(std::move(*reply));
          });
        });
  }

  void on_reply(ModelReply reply) {
    if (reply.tool_calls.empty()) return finish_round(std::move(reply.text));
    if (model_calls_ >= client_->options().max_model_calls) {
      return fail({std::string(code::kInvalid),
                   "the model still asked for tools after " +
                       std::to_string(model_calls_) + " calls in one turn"});
    }
    calls_ = reply.tool_calls;
    next_call_ = 0;
    request_.messages.push_back({.role = ModelMessage::Role::kAssistant,
                                 .text = std::move(reply.text),
                                 .tool_calls = std::move(reply.tool_calls)});
    run_next_tool();
  }

  void run_next_tool() {
    if (next_call_ == calls_.size()) return call_model();
    const ToolCall& call = calls_[next_call_++];
    const auto tool = std::ranges::find_if(
        tools_, [&](const Tool& t) { return t.schema.name == call.name; });
    if (tool == tools_.end()) {
      return tool_done(call,
                       {.text = "error: unknown tool '" + call.name + "'"});
    }
    auto self = shared_from_this();
    try {
      tool->run(
          call.arguments_json, dependencies_,
          [self, call, strand = hub_->executor()](Result<ToolResult> result) {
            net::post(strand, [self, call, result = std::move(result)] {
              self->tool_done(
                  call,
                  result ? *result
                         : ToolResult{.text = "error: " + result.error().code +
                                              ": " + result.error().message});
            });
          });
    } catch (const std::exception& e) {
      tool_done(call, {.text = std::string("error: ") + e.what()});
    }
  }

  void tool_done(const ToolCall& call, ToolResult result) {
    outcomes_.push_back({.name = call.name,
                         .arguments = call.arguments_json,
                         .handoff = std::move(result.handoff),
                         .finish = std::move(result.finish)});
    request_.messages.push_back({.role = ModelMessage::Role::kTool,
                                 .text = std::move(result.text),
                                 .tool_call_id = call.id,
                                 .tool_name = call.name});
    run_next_tool();
  }

  void finish_round(std::string body) {
    body_ = std::move(body);
    // Tools may have posted: fold what the channel holds now.
    if (outcomes_.empty()) return resolve_handoffs(0);
    read_channel([](Turn& self) { self.resolve_handoffs(0); });
  }

  // A Handoff's target names an agent: its id when registered, else as is.
  void resolve_handoffs(std::size_t from) {
    for (std::size_t i = from; i < outcomes_.size(); ++i) {
      if (!outcomes_[i].handoff) continue;
      hub_->get_agent(outcomes_[i].handoff->target,
                      [self = shared_from_this(), i](Result<Passport> found) {
                        if (found && found->agent_id) {
                          self->outcomes_[i].handoff->target = *found->agent_id;
                        }
                        self->resolve_handoffs(i + 1);
                      });
      return;
    }
    post_round();
  }

  void post_round() {
    auto out = adapter_->build_round_envelope(
        *metadata_, me(), {.body = body_, .tool_calls = outcomes_}, *state_);
    if (!out) return succeed();
    out->causation_id = trigger_.envelope_id;
    hub_->post_envelope(std::move(*out),
                        then<std::string>([](Turn& self, const std::string&) {
                          self.succeed();
                        }));
  }

  void succeed() { done_({}); }
  void skip() { done_({}); }

  void fail(Error error) {
    hub_->report_turn_failure(trigger_.channel_id, me(), trigger_.envelope_id,
                              error.code + ": " + error.message,
                              [self = shared_from_this(), error](Result<void>) {
                                self->done_(std::unexpected(error));
                              });
  }

  const std::shared_ptr<AgentClient> client_;
  const std::shared_ptr<HubClient> hub_;
  const Envelope trigger_;
  Handler<void> done_;
  const std::shared_ptr<Task> task_;  // the turn's TASK_DEP, or none

  std::shared_ptr<const ChannelMetadata> metadata_;
  std::shared_ptr<const ChannelAdapter> adapter_;
  std::vector<Envelope> wal_;
  std::shared_ptr<const AdapterState> state_;
  std::map<std::string, std::string> names_;
  TurnDependencies dependencies_;
  std::vector<Tool> tools_;
  ModelRequest request_;
  int model_calls_ = 0;
  std::vector<ToolCall> calls_;
  std::size_t next_call_ = 0;
  std::vector<engine::ToolCallOutcome> outcomes_;
  std::string body_;
};

}  // namespace

void default_handler(const Envelope& envelope, AgentClient& client,
                     Handler<void> done, std::shared_ptr<Task> task) {
  const std::string_view type = envelope.event_type;
  if (type == event_type::kChannelInvite) {
    if (envelope.sender_id == client.agent_id()) return done({});
    client.hub_client()->post_envelope(
        invite_ack(envelope, client.agent_id()),
        [done = std::move(done)](Result<std::string>) { done({}); });
    return;
  }
  if (engine::event_type::is_protocol(type) ||
      envelope.sender_id == client.agent_id()) {
    return done({});
  }
  std::make_shared<Turn>(client.shared_from_this(), envelope, std::move(done),
                         std::move(task))
      ->start();
}

}  // namespace parley::client
