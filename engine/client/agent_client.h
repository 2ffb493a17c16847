// AgentClient: an LLM participant on a hub (AG2's AgentClient), registered
// with register_agent (any kind but "human") or re-attached with attach, on
// a HubClient of either link, with a Model to run its turns.
//
// Inbound, each envelope delivered to the agent goes to its handler: the
// default handler (engine/client/default_handler.h) unless on_envelope()
// replaced it. A handler is told (envelope, done); when it calls done the
// receipt is sent: "ack" on success, "nack" with the error's message on a
// failure. Envelopes of one channel are handled one at a time, in delivery
// order; different channels' run concurrently (interleaved on the strand).
//
// Threading: every member may be called from any thread; handlers, the
// model's answers and tools run on the HubClient's strand and must not
// block it.
//
// Lifetime: owned by shared_ptr; it keeps its HubClient and Model alive.
// A handler must not own the AgentClient (that is a cycle): capture a
// weak_ptr or a raw pointer; a handler is only called while the client is
// alive, and the client stays alive until every handler call is done.
// After disconnect() nothing more is delivered and sends fail with kClosed.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/adapters/adapter_registry.h"
#include "engine/client/hub_client.h"
#include "engine/client/model.h"
#include "engine/client/open_channel.h"
#include "engine/client/tools.h"
#include "engine/client/views.h"

namespace parley::client {

struct AgentOptions {
  // The system prompt, after the identity line "You are <name> (agent_id:
  // <id>)." that the default handler puts first.
  std::string instructions;
  // The agent's own tools, offered every turn beside the adapter's.
  std::vector<Tool> tools;
  // AG2's NetworkPlugin: the identity-level tools (network_tools():
  // delegate, peers, channels, tasks, context) offered every turn after the
  // agent's own. False offers only the adapter's and the agent's own; the
  // adapter's `say` is not a plugin tool and stays.
  bool attach_plugin = true;
  // How many times one turn may call the model (the first call plus one per
  // round of tool calls); beyond it the turn fails.
  int max_model_calls = 10;
  // The adapters channels are folded with (the built-ins by default); a
  // custom channel type must be registered here as on the hub.
  std::shared_ptr<const engine::AdapterRegistry> adapters;
  // Views by name (the built-ins by default); custom views go here.
  ViewRegistry views = ViewRegistry::builtin();
};

// Handles one envelope; calls `done` once when finished, from any thread.
using AgentHandler =
    std::function<void(const Envelope& envelope, Handler<void> done)>;

class AgentClient : public std::enable_shared_from_this<AgentClient> {
  struct PrivateTag {};

 public:
  // Registers `registration` (HubClient::register_agent: kind "human" is
  // refused).
  static void register_agent(std::shared_ptr<HubClient> hub,
                             Registration registration,
                             std::shared_ptr<Model> model, AgentOptions options,
                             Handler<std::shared_ptr<AgentClient>> done);
  // Re-attaches the agent registered as `name` (HubClient::attach, replaying
  // what it has not acked).
  static void attach(std::shared_ptr<HubClient> hub, std::string name,
                     engine::AuthInfo auth, std::shared_ptr<Model> model,
                     AgentOptions options,
                     Handler<std::shared_ptr<AgentClient>> done);

  AgentClient(PrivateTag, std::shared_ptr<HubClient> hub,
              std::shared_ptr<Model> model, AgentOptions options);
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;
  ~AgentClient();

  // The stamped passport; fixed once registered.
  const Passport& passport() const { return passport_; }
  const std::string& agent_id() const { return agent_id_; }
  const std::shared_ptr<HubClient>& hub_client() const { return hub_; }
  Model& model() const { return *model_; }
  const AgentOptions& options() const { return options_; }
  const engine::AdapterRegistry& adapters() const { return *options_.adapters; }

  // --- Handling ------------------------------------------------------------
  // Replaces the default handler for envelopes delivered from now on.
  void on_envelope(AgentHandler handler);
  // Restores the default handler.
  void remove_envelope_handler();
  // The view used in `channel_id` instead of the manifest's default
  // (resolve_view_policy); nullptr removes the override.
  void set_view(std::string channel_id, std::shared_ptr<const ViewPolicy> view);
  // The override set for `channel_id`, or nullptr. On the strand.
  std::shared_ptr<const ViewPolicy> view_override(
      std::string_view channel_id) const;
  // Envelopes of `channel_id` delivered from now on go to `watcher` instead
  // of the handler, each acked when the watcher returns, until
  // unwatch_channel (how `delegate` owns the consulting channel it opened).
  // Both on the strand.
  using ChannelWatcher = std::function<void(const Envelope&)>;
  void watch_channel(std::string channel_id, ChannelWatcher watcher);
  void unwatch_channel(std::string_view channel_id);

  // --- Sending --------------------------------------------------------------
  // Opens a channel as its initiator; `done` once every invitee acked.
  void open(OpenRequest request, Handler<ChannelMetadata> done);
  // Posts an `ag2.msg.text`; returns its envelope id.
  void send(std::string channel_id, std::string text, Handler<std::string> done,
            std::optional<std::vector<std::string>> audience = {},
            std::optional<std::string> causation_id = {});
  // Posts any envelope (custom event types too); an empty sender_id is
  // stamped with the agent's id.
  void send_envelope(Envelope envelope, Handler<std::string> done);

  // Stops deliveries to this agent (they wait in the hub's log, unacked).
  // Idempotent.
  void disconnect();

 private:
  struct Inbound {
    Envelope envelope;
    Finished finished;
  };

  // The HubClient's EnvelopeHandler for this agent.
  void receive(const Envelope& envelope, Finished finished);
  void run_next(const std::string& channel_id);
  static EnvelopeHandler handler_for(const std::shared_ptr<AgentClient>& self);
  static Handler<Passport> on_registered(
      std::shared_ptr<AgentClient> self,
      Handler<std::shared_ptr<AgentClient>> done);

  const std::shared_ptr<HubClient> hub_;
  const std::shared_ptr<Model> model_;
  const AgentOptions options_;
  Passport passport_;     // written once before the client is handed out
  std::string agent_id_;  // likewise

  // On the strand:
  AgentHandler handler_;  // empty: the default handler
  bool disconnected_ = false;
  std::map<std::string, std::shared_ptr<const ViewPolicy>, std::less<>>
      view_overrides_;
  std::map<std::string, ChannelWatcher, std::less<>> watchers_;
  // Per channel: envelopes waiting, and whether one is being handled.
  struct ChannelQueue {
    std::deque<Inbound> waiting;
    bool busy = false;
  };
  std::map<std::string, ChannelQueue> queues_;
};

}  // namespace parley::client
