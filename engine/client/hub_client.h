// HubClient: one program's connection to a Parley (or AG2) hub, carrying any
// number of agents, over one of two links with the same behaviour:
//
//   in_process(executor, hub)   an embedded engine::Hub, through the op
//                               layer's non-blocking ControlPlane::call and
//                               the hub's deliveries
//   connect(executor, "ws://")  `parley serve` or AG2's hub, AG2's frames
//                               over a WebSocket (Boost.Beast)
//
// What it does for each agent registered (register_agent, register_human)
// or re-attached (attach: AG2's hello with since_envelope_id replay)
// through it: every envelope the hub delivers to the agent is given to the
// agent's EnvelopeHandler once (a redelivery of an envelope already seen is
// not given again), and when the handler says it is finished the client
// sends the hub a receipt ("ack", or "nack" with a reason), which moves the
// agent's per-channel cursor. Over the WebSocket link a lost connection is
// re-opened (backoff from reconnect_initial to reconnect_max) and every
// agent is re-attached with since_envelope_id "" (everything it has not
// acked), so an envelope is neither missed nor handled twice; receipts and
// calls made while it was down are sent once it is back. Envelopes reach a
// handler in the order the hub sends them; right after a re-attach,
// replayed envelopes may interleave with live ones (each still given once).
//
// Calls are RPCs with a timeout (HubClientOptions::rpc_timeout unless a
// call says otherwise): the handler gets the op's result, the hub's error
// exactly as the hub answered (Error::code is its wire code, Error::message
// its text), or the client's own error (code::kTimeout, kDisconnected,
// kClosed, kInvalid).
//
// Threading: every member may be called from any thread; the client's work
// runs on a strand of the executor given at construction, and every
// Handler and EnvelopeHandler is called on that strand (never inline from
// the call that started it), so they must not block it. No thread is
// started per agent or per connection: the embedder runs the executor.
//
// Lifetime: owned by shared_ptr; pending work keeps the internals alive.
// The executor's execution context must outlive the client (the destructor
// posts its close there).
// close() (or the destructor) ends the connection; calls still pending are
// told kClosed or their answer, and nothing more is delivered.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/channels/channel.h"
#include "engine/client/error.h"
#include "engine/hub/requests.h"
#include "engine/registry/identity.h"
#include "engine/registry/registry.h"
#include "engine/tasks/task.h"

namespace parley::engine {
class Hub;
}

namespace parley::client {

using engine::ChannelMetadata;
using engine::CreateChannelRequest;
using engine::Envelope;
using engine::Passport;
using engine::Resume;
using engine::Rule;

// Tells the client that the handler is done with an envelope: ok sends an
// "ack" receipt, !ok a "nack" with `reason`. Call it once, from any thread;
// later calls are ignored.
using Finished = std::function<void(bool ok, std::string reason)>;
// Handles one envelope delivered to an agent, on the client's strand. An
// exception escaping it is logged and answered with a nack.
using EnvelopeHandler = std::function<void(const Envelope&, Finished)>;

struct HubClientOptions {
  std::chrono::milliseconds rpc_timeout{30000};  // AG2's default
  std::chrono::milliseconds reconnect_initial{100};
  std::chrono::milliseconds reconnect_max{5000};
  // One line per event worth a log (a lost connection, a skipped frame, a
  // handler that threw). Default: standard error. Called on the strand.
  std::function<void(std::string_view)> log;
  // wss://: the PEM file of the CAs that may sign the hub's certificate;
  // none: the system's trusted CAs. The certificate must also name the
  // host of the URL (DNS name or IP address).
  std::optional<std::filesystem::path> tls_ca_file;
};

// What a registration sends: AG2's register op.
struct Registration {
  Passport passport;
  Resume resume;
  std::optional<std::string> skill_md;
  std::optional<Rule> rule;
};

// What record_observation sends: one outcome of a task.
struct Observation {
  std::string owner_id;
  std::string capability;
  std::string outcome;  // the task's terminal state
  std::optional<double> latency_ms;
  std::optional<std::string> task_id;
};

class HubClientImpl;

class HubClient {
 public:
  // The in-process link: `hub` must outlive the client, and the executor's
  // context must outlive the hub's being open (a call the hub still holds
  // is answered on the client's strand; Hub::close() answers them all).
  static std::shared_ptr<HubClient> in_process(
      boost::asio::any_io_executor executor, engine::Hub& hub,
      HubClientOptions options = {});
  // The WebSocket link to `url` (ws://HOST:PORT[/PATH] or wss://…): `done`
  // gets the connected client, or kInvalid for a bad URL or CA file,
  // kDisconnected when the hub cannot be reached or its certificate is not
  // trusted.
  static void connect(boost::asio::any_io_executor executor,
                      std::string_view url, HubClientOptions options,
                      Handler<std::shared_ptr<HubClient>> done);

  explicit HubClient(std::shared_ptr<HubClientImpl> impl);
  HubClient(const HubClient&) = delete;
  HubClient& operator=(const HubClient&) = delete;
  ~HubClient();

  // The strand the client runs on (and calls every handler on).
  boost::asio::any_io_executor executor() const;
  bool is_in_process() const;
  // Writes `line` to the client's log (HubClientOptions::log).
  void log(std::string_view line) const;

  // --- Agents on this connection -------------------------------------------
  // AG2's HubClient.register for a non-human: refuses kind "human" (kInvalid,
  // "register() does not accept kind='human'; use register_human()").
  // `done` gets the stamped passport; `handler` gets the agent's envelopes
  // from then on.
  void register_agent(Registration registration, EnvelopeHandler handler,
                      Handler<Passport> done);
  // AG2's register_human: kind null or "human" (forced to "human"), else
  // kInvalid "register_human() requires kind='human' (or None); got '<k>'".
  void register_human(Registration registration, EnvelopeHandler handler,
                      Handler<Passport> done);
  // Re-attaches the agent registered as `name` (get_agent, then AG2's hello
  // proving `auth`, the credential it registered with: Parley never echoes
  // claims). `since_envelope_id`: "" (default) replays everything the agent
  // has not acked in its non-terminal channels, an id everything after it,
  // nullopt nothing. The replay follows `done`.
  void attach(std::string name, engine::AuthInfo auth, EnvelopeHandler handler,
              Handler<Passport> done,
              std::optional<std::string> since_envelope_id = std::string());

  // AG2's unregister: the hub forgets the agent; once it answered ok, so
  // does this client (no more deliveries, no re-attach on a reconnect).
  void unregister(std::string agent_id, Handler<void> done);

  // --- Control-plane ops ----------------------------------------------------
  // One method per AG2 op, with AG2's parameters and defaults; the result is
  // read into the engine's record (an answer that does not read is kInvalid
  // "unreadable answer: <why>"). JSON-valued arguments are JSON text; text
  // that is not JSON fails with kInvalid before anything is sent.

  // Any op, params and result as JSON text. `timeout` 0: the default.
  void call(std::string op, std::string params_json, Handler<std::string> done,
            std::chrono::milliseconds timeout = {});

  // Agents.
  void get_agent(std::string name_or_id, Handler<Passport> done);
  // The id registered under `name`, or nullopt.
  void find_agent_id(std::string name,
                     Handler<std::optional<std::string>> done);
  // Agent id -> registered name; unknown ids map to themselves.
  void names_for(std::vector<std::string> agent_ids,
                 Handler<std::map<std::string, std::string>> done);
  // The passports `filter` selects (AgentFilter: capability, a
  // case-insensitive query in the resume's summary, kind, sort_by "name",
  // limit 50), as AG2's list_agents.
  void list_agents(engine::AgentFilter filter,
                   Handler<std::vector<Passport>> done);
  void get_resume(std::string agent_id, Handler<Resume> done);
  void set_resume(std::string agent_id, Resume resume, Handler<void> done);
  void get_rule(std::string agent_id, Handler<Rule> done);
  void set_rule(std::string agent_id, Rule rule, Handler<void> done);
  // The agent's SKILL.md as registered, or nullopt (none, or no such agent).
  // engine::parse_skill_frontmatter splits it; engine::render_fallback_skill
  // renders what peers are shown when there is none.
  void get_skill(std::string agent_id,
                 Handler<std::optional<std::string>> done);
  // Replaces the agent's SKILL.md; nullopt deletes it.
  void set_skill(std::string agent_id, std::optional<std::string> skill_md,
                 Handler<void> done);
  // Adds a task outcome to the owner's track record (its resume's
  // `observed[capability]`).
  void record_observation(Observation observation, Handler<void> done);

  // Channels and envelopes.
  void create_channel(CreateChannelRequest request,
                      Handler<ChannelMetadata> done,
                      std::chrono::milliseconds timeout = {});
  void get_channel(std::string channel_id, Handler<ChannelMetadata> done);
  // The channels `agent_id` takes part in, at most `limit`. nullopt: over
  // the wire, the channels of this connection's agents; in-process, every
  // channel.
  void list_channels(std::optional<std::string> agent_id,
                     Handler<std::vector<ChannelMetadata>> done,
                     std::int64_t limit = 50);
  void close_channel(std::string channel_id, std::string reason,
                     Handler<ChannelMetadata> done);
  // Returns the envelope id the hub minted.
  void post_envelope(Envelope envelope, Handler<std::string> done);
  // The Python slice [since:until] of the channel's envelopes (negative
  // values count from the end); an unknown channel reads as empty.
  void read_wal(std::string channel_id, Handler<std::vector<Envelope>> done,
                std::int64_t since = 0,
                std::optional<std::int64_t> until = std::nullopt);
  // Whether `sender_id` may post now (`event_type`: of that type).
  void can_send(std::string channel_id, std::string sender_id,
                Handler<bool> done,
                std::optional<std::string> event_type = std::nullopt);
  // The envelope `sender_id` posted in the channel with `causation_id`, or
  // nullopt (how a handler tells it already answered an envelope).
  void find_envelope_by_causation(std::string channel_id, std::string sender_id,
                                  std::string causation_id,
                                  Handler<std::optional<Envelope>> done);
  // The turns the hub is waiting for `agent_id` to take.
  void pending_turns_for(std::string agent_id,
                         Handler<std::vector<engine::PendingTurn>> done);
  // Tells the hub `agent_id`'s turn on `envelope_id` failed with `error`.
  void report_turn_failure(std::string channel_id, std::string agent_id,
                           std::string envelope_id, std::string error,
                           Handler<void> done);

  // Tasks (the owner's side is client::Task, which calls these).
  void get_task(std::string task_id, Handler<engine::TaskMetadata> done);
  // The tasks `filter` selects (owner, channel, state; limit 50).
  void list_tasks(engine::TaskFilter filter,
                  Handler<std::vector<engine::TaskMetadata>> done);
  // Records a task the caller owns, as it stands.
  void observe_task(engine::TaskMetadata metadata, Handler<void> done);
  void update_task(std::string task_id, engine::TaskUpdate update,
                   Handler<void> done);
  // Tells the hub's task listeners of `kind` (e.g. "mirror_failed");
  // `payload_json` a JSON object.
  void fire_task_event(std::string task_id, std::string kind,
                       std::string payload_json, Handler<void> done);
  // Stores `state_json` (a JSON object) as the task's checkpoint; the last
  // one wins.
  void checkpoint_task(std::string task_id, std::string state_json,
                       Handler<void> done);
  // The task's checkpoint as JSON text, or nullopt.
  void read_task_checkpoint(std::string task_id,
                            Handler<std::optional<std::string>> done);

  // --- The connection -------------------------------------------------------
  // Drops the link (the hub unbinds every agent; their envelopes wait in the
  // log) without reconnecting; calls made meanwhile wait for reconnect().
  void disconnect();
  // Opens a new link and re-attaches every agent with since_envelope_id "".
  void reconnect(Handler<void> done);
  void close();

 private:
  std::shared_ptr<HubClientImpl> impl_;
};

}  // namespace parley::client
