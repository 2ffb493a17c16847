// The hub: AG2's hub API over an event-sourced log. A facade over the
// hub's parts (all in engine/hub/), which share one HubCore:
//
//   Committer        the single writer: every change is staged under one
//                    writer lock, appended, folded at once and made durable
//                    by a group commit; blocking and asynchronous callers
//   PostPipeline     the post pipeline, in AG2's check order
//   ChannelLifecycle creation and the invite handshake, closes, expiries
//   Identities       agents, cursors, turn failures, tenant audit records
//   TaskMutations    tasks, checkpoints and their writers, task expiry
//   Delivery         subscribers, inbox counters, publishing a durable
//                    batch's deliveries and listener events
//   PeriodicWork     the TTL sweep and the expectation tick
//   StateReads       every read, from the folded state and the log
//
// Every state change is validated against the folded state, written to the
// log as one atomic batch of records, and folded into the state by the same
// HubState::apply hydrate runs when a hub opens on an existing store. A
// rejected call writes nothing.
//
// Threading: every member is thread-safe. Reads take a shared lock on the
// folded state and never wait for the writer or a sync. A blocking call's
// deliveries run on the calling thread after every hub lock is released,
// so a subscriber may call back into the hub (an invitee acking its
// invite).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/adapters/adapter_registry.h"
#include "engine/base/clock.h"
#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/channels/channel.h"
#include "engine/expectations/expectation_registry.h"
#include "engine/hub/arbiter.h"
#include "engine/hub/delivery_queue.h"
#include "engine/hub/hub_health.h"
#include "engine/hub/hub_listener.h"
#include "engine/hub/requests.h"
#include "engine/registry/auth.h"
#include "engine/registry/identity.h"
#include "engine/tasks/task.h"
#include "engine/tasks/task_access.h"
#include "log/log_store.h"

namespace parley::log {
class HandoverLogStore;
}

namespace parley::engine {

struct Commit;
struct HubCore;
class Committer;
class Delivery;
class StateReads;
class Identities;
class TaskMutations;
class ChannelLifecycle;
class PostPipeline;
class PeriodicWork;

struct HubOptions {
  std::shared_ptr<log::LogStore> store;  // required; the hub closes it
  std::shared_ptr<const Clock> clock;    // default: SystemClock
  // How long create_channel waits for every invitee's ack; on timeout the
  // channel closes with "invite_timeout".
  std::chrono::milliseconds invite_ack_timeout{30000};
  bool register_default_adapters = true;
  // Registered before hydrate, after the built-ins (so they may replace
  // them).
  std::vector<std::shared_ptr<const ChannelAdapter>> adapters;
  std::shared_ptr<const AuthRegistry> auth;  // default: scheme "none" only
  // Told about every change (engine/hub/hub_listener.h), in this order.
  std::vector<std::shared_ptr<HubListener>> listeners;
  // The decision seam (engine/hub/arbiter.h); default: RuleBasedArbiter.
  std::shared_ptr<Arbiter> arbiter;
  // Expectation evaluators and handlers, registered after the
  // built-ins (which come with register_default_adapters), replacing
  // same-named ones.
  std::vector<std::shared_ptr<const ExpectationEvaluator>>
      expectation_evaluators;
  std::vector<std::shared_ptr<const ExpectationHandler>> expectation_handlers;
};

class Hub {
 public:
  // Opens a hub on `options.store`: registers the adapters, folds the whole
  // log (hydrate), then expires channels left pending by a previous run
  // (reason "hydrate_orphaned_pending"). Fails when the log is unreadable.
  static Result<std::unique_ptr<Hub>> open(HubOptions options);

  Hub(const Hub&) = delete;
  Hub& operator=(const Hub&) = delete;
  ~Hub();

  // Fails pending create_channel calls with "the hub is closed", waits for
  // them to return, then closes the store. Idempotent; later mutations
  // fail. Other calls still running on other threads must end before the
  // hub is destroyed.
  Result<void> close();

  // --- Standby -------------------------------------------------------------
  // A hub that follows a log another hub writes, ready to take it over:
  // folds `options.store` (a read-only view of that log) as open() does,
  // but starts no writer and expires nothing. follow() folds what the
  // writer appends since; take_over() makes this hub the writer. Until
  // then call nothing but follow(), take_over(), the reads and close().
  static Result<std::unique_ptr<Hub>> open_standby(HubOptions options);
  // Waits up to `timeout` for records past those folded and folds them;
  // returns the last log sequence folded. Standby only.
  Result<std::uint64_t> follow(std::chrono::milliseconds timeout);
  // `writable` is the same log opened read-write, its writer gone or
  // fenced. Closes the view, folds what was committed since the last
  // follow(), then starts as open() does: the writer, then pending
  // channels expired. Standby only, once; after a failure, close the hub.
  Result<void> take_over(std::unique_ptr<log::LogStore> writable);

  // --- Identity ------------------------------------------------------------
  // `owners`: only for a remote_agent registered over the wire, the agents
  // of this hub bound to the registering connection; recorded (sorted,
  // unique) with the registration, read back by agent_owners(). Owners for
  // any other kind are refused with kInvalid.
  Result<Passport> register_identity(Passport passport, Resume resume,
                                     std::optional<std::string> skill_md,
                                     std::optional<Rule> rule,
                                     std::vector<std::string> owners = {});
  Result<void> unregister(std::string_view agent_id);
  Result<void> set_resume(std::string_view agent_id, Resume resume);
  Result<void> set_skill(std::string_view agent_id,
                         std::optional<std::string> skill_md);
  Result<void> set_rule(std::string_view agent_id, Rule rule);
  Result<void> record_observation(std::string_view owner_id,
                                  std::string_view capability,
                                  std::string_view outcome,
                                  std::optional<double> latency_ms,
                                  std::optional<std::string> task_id);

  // A Hello's admission: the agent registered as `name` re-attaches, proving
  // itself with `claim_json` (the Hello's auth_claim as JSON text) under
  // `scheme`, which must be the scheme it registered with. Checks nothing else
  // and binds nothing. Returns its agent id, or:
  //   not_found   "unknown name: <name>"
  //   auth_failed "auth_claim must be a JSON object"
  //   auth_failed "remote agent '<name>' re-attaches only alongside its
  //               owner" (Parley keeps no owners, so always for those)
  //   auth_failed "unknown auth scheme: '<scheme>'"
  //   auth_failed "auth scheme '<scheme>' does not match '<name>''s
  //               registered scheme '<registered>'"
  //   or the registered scheme's refusal of the claim.
  Result<std::string> authenticate(std::string_view name,
                                   std::string_view scheme,
                                   std::string_view claim_json) const;

  Result<Passport> get_agent(std::string_view name_or_id) const;
  std::optional<std::string> find_agent_id(std::string_view name) const;
  std::string name_for(std::string_view agent_id,
                       std::optional<std::string_view> fallback = {}) const;
  Result<Resume> get_resume(std::string_view agent_id) const;
  Result<Rule> get_rule(std::string_view agent_id) const;
  std::optional<std::string> get_skill(std::string_view agent_id) const;
  std::vector<Passport> list_agents(const AgentFilter& filter) const;
  std::vector<std::string> agents_with_capability(
      std::string_view capability) const;
  // The owners recorded when `agent_id` registered (sorted); empty for an
  // agent without owners or an unknown id.
  std::vector<std::string> agent_owners(std::string_view agent_id) const;

  // --- Channels ------------------------------------------------------------
  // Returns once every invitee acked (the channel is active), or fails with
  // AG2's error when an invitee rejects, the ack timeout passes or an invite
  // cannot be posted.
  Result<ChannelMetadata> create_channel(const CreateChannelRequest& request);
  Result<ChannelMetadata> close_channel(std::string_view channel_id,
                                        std::string_view reason = {});
  Result<ChannelMetadata> get_channel(std::string_view channel_id) const;
  std::vector<ChannelMetadata> list_channels(
      std::optional<std::string_view> agent_id,
      std::optional<ChannelState> state, std::size_t limit = 50) const;

  // The post pipeline: AG2's checks in AG2's order
  // (engine/hub/post_pipeline.h); returns the minted envelope id.
  Result<std::string> post_envelope(Envelope envelope);

  // Python slice [since:until] of the channel's envelopes (negative values
  // count from the end); an unknown channel reads as empty. Each envelope
  // carries its per-channel sequence.
  Result<std::vector<Envelope>> read_wal(
      std::string_view channel_id, std::int64_t since = 0,
      std::optional<std::int64_t> until = std::nullopt) const;
  Result<std::optional<Envelope>> find_envelope_by_causation(
      std::string_view channel_id, std::string_view sender_id,
      std::string_view causation_id) const;
  bool can_send(std::string_view channel_id, std::string_view sender_id,
                std::optional<std::string_view> event_type = {}) const;
  // The folded adapter state as AG2 reports it; null when dormant.
  Result<std::optional<JsonText>> adapter_state(
      std::string_view channel_id) const;
  std::vector<PendingTurn> pending_turns_for(std::string_view agent_id) const;

  // One TTL sweep: every non-terminal channel whose expires_at <= now is
  // expired with reason "ttl_expired", then every live task whose expires_at <=
  // now, with error "ttl_expired".
  Result<void> expire_due();

  // --- Expectations (engine/hub/periodic_work.h) ----------------------------
  // One expectation tick at the clock's now: every non-terminal channel's
  // manifest expectations are evaluated in order; each new (expectation
  // index, violator) is logged with its audit record and its handler's
  // effects as one batch, then the listeners hear of it. A channel that
  // closes stops its own tick only; a failing channel is reported on
  // stderr and the others still run (its error is returned at the end).
  // Returns how many firings were logged. Does nothing when either
  // registry is empty.
  Result<std::size_t> tick_expectations();

  // --- Delivery ------------------------------------------------------------
  // Binds `agent_id`'s deliveries to `callback`, replacing an earlier one.
  void subscribe(std::string_view agent_id, DeliveryCallback callback);
  // Binds `agent_id`'s deliveries to a new queue the caller pops from.
  std::shared_ptr<DeliveryQueue> subscribe_queue(std::string_view agent_id);
  void unsubscribe(std::string_view agent_id);

  // A receipt: an "ack" from a registered recipient for a channel moves its
  // cursor there to `envelope_id` when that is greater. Other statuses, unknown
  // recipients and empty ids change nothing.
  Result<void> acknowledge(std::string_view recipient_id,
                           std::string_view channel_id,
                           std::string_view envelope_id,
                           std::string_view status = "ack");
  // The highest acked envelope id of the agent in the channel, or "".
  std::string inbox_cursor(std::string_view agent_id,
                           std::string_view channel_id) const;
  // What a reconnecting agent missed (replay after a Hello): per non-terminal
  // channel it takes part in, in channel order, every envelope after
  // max(cursor, since_envelope_id) that another sender addressed to it
  // (audience null or listing it), in log order.
  Result<std::vector<Envelope>> replay_for(
      std::string_view agent_id, std::string_view since_envelope_id) const;

  // --- Audit ---------------------------------------------------------------
  // A client's notify handler crashed: audit "turn_failed".
  // Over the wire AG2 reports every such crash as a RuntimeError.
  Result<void> report_turn_failure(std::string_view channel_id,
                                   std::string_view agent_id,
                                   std::string_view envelope_id,
                                   std::string_view message);
  // Every audit record in log order, as AG2 JSON objects.
  Result<std::vector<JsonText>> read_audit() const;

  // --- Tasks (engine/hub/task_mutations.h) ---------------------------------
  // `connection`, on the task calls that take it: the agents bound to the
  // wire connection the request came from. When given, check_task_access
  // (engine/tasks/task_access.h) must pass for the task id in the same hold
  // of the hub's lock as the read or change, else its access_denied is
  // returned and nothing is written. In-process callers pass none.
  //
  // A task the owner's runtime reports. A known id is updated in place (state
  // always; started_at, expires_at, channel_id when given; progress merged). A
  // new id needs a registered owner, a valid id (one path segment,
  // is_valid_task_id), room under the owner's max_concurrent_tasks and, when it
  // names a channel, a channel the owner takes part in; without expires_at it
  // expires after the owner's task_ttl_default.
  Result<void> observe_task(
      TaskMetadata metadata,
      std::optional<ConnectionAgents> connection = std::nullopt);
  // Unknown id: not_found "task not found: <id>". A terminal task is left
  // as it is (terminal is final). A terminal new state stamps completed_at
  // and, in the same batch, writes the task_terminated audit record and,
  // for a capability-tagged task, the owner's observation.
  Result<void> update_task(
      std::string_view task_id, const TaskUpdate& update,
      std::optional<ConnectionAgents> connection = std::nullopt);
  Result<TaskMetadata> get_task(std::string_view task_id) const;
  std::vector<TaskMetadata> list_tasks(const TaskFilter& filter) const;
  // Last write wins; a checkpoint of a task already terminal is ignored.
  // `state` is a JSON object's text. With a `connection`, the first write
  // of an unobserved task's checkpoint nobody claimed yet claims it for the
  // connection's agents: a CheckpointWritersClaimed record in the same
  // batch, so two racing first writers cannot both claim it.
  Result<void> checkpoint_task(
      std::string_view task_id, JsonText state,
      std::optional<ConnectionAgents> connection = std::nullopt);
  Result<std::optional<JsonText>> read_task_checkpoint(
      std::string_view task_id,
      std::optional<ConnectionAgents> connection = std::nullopt) const;
  // check_task_access under the shared lock, for a wire request that
  // changes nothing (fire_task_event).
  Result<void> check_task_access(std::string_view task_id,
                                 ConnectionAgents connection) const;
  // The agents that claimed `task_id`'s checkpoint (sorted), or nullopt
  // when nobody has.
  std::optional<std::vector<std::string>> checkpoint_writers(
      std::string_view task_id) const;
  // Tells the listeners on_task_event; writes nothing.
  void fire_task_event(std::string_view task_id, std::string_view kind,
                       const nlohmann::json& payload);
  // What AG2's tasks(action="cancel") tool posts: ag2.task.cancel_request
  // from `requester_id` to the owner on the task's channel. Refused when
  // the task is unknown, terminal or has no channel.
  Result<std::string> request_task_cancel(std::string_view requester_id,
                                          std::string_view task_id,
                                          std::string_view reason);

  // --- Completion-style calls ---------------------------------------------
  // Each does what the blocking call of the same name does and tells `done`
  // its outcome, once:
  //   Dispatch::kAsync (for a server): never waits for the log or for
  //     a create_channel's acks (it may stage the change on the calling
  //     thread, under the writer lock; see SubmissionBatch); `done` runs on
  //     a hub thread (the log thread that made it durable, or the
  //     committer's), after the change's deliveries and listener events,
  //     which run there too and must not block (at once, on the calling
  //     thread, if the hub closed).
  //   Dispatch::kInline: the blocking call, with `done` told on the calling
  //     thread before it returns.
  void register_identity(Passport passport, Resume resume,
                         std::optional<std::string> skill_md,
                         std::optional<Rule> rule,
                         std::vector<std::string> owners, Done<Passport> done,
                         Dispatch dispatch = Dispatch::kAsync);
  void unregister(std::string_view agent_id, Done<void> done,
                  Dispatch dispatch = Dispatch::kAsync);
  void set_resume(std::string_view agent_id, Resume resume, Done<void> done,
                  Dispatch dispatch = Dispatch::kAsync);
  void set_skill(std::string_view agent_id, std::optional<std::string> skill_md,
                 Done<void> done, Dispatch dispatch = Dispatch::kAsync);
  void set_rule(std::string_view agent_id, Rule rule, Done<void> done,
                Dispatch dispatch = Dispatch::kAsync);
  void record_observation(std::string_view owner_id,
                          std::string_view capability, std::string_view outcome,
                          std::optional<double> latency_ms,
                          std::optional<std::string> task_id, Done<void> done,
                          Dispatch dispatch = Dispatch::kAsync);
  void create_channel(const CreateChannelRequest& request,
                      Done<ChannelMetadata> done,
                      Dispatch dispatch = Dispatch::kAsync);
  void close_channel(std::string_view channel_id, std::string_view reason,
                     Done<ChannelMetadata> done,
                     Dispatch dispatch = Dispatch::kAsync);
  void post_envelope(Envelope envelope, Done<std::string> done,
                     Dispatch dispatch = Dispatch::kAsync);
  // The same with the envelope already in the block the hub keeps it in
  // (not null): no copy or move of it on the way.
  void post_envelope(std::shared_ptr<Envelope> envelope, Done<std::string> done,
                     Dispatch dispatch = Dispatch::kAsync);
  void acknowledge(std::string_view recipient_id, std::string_view channel_id,
                   std::string_view envelope_id, std::string_view status,
                   Done<void> done, Dispatch dispatch = Dispatch::kAsync);
  void report_turn_failure(std::string_view channel_id,
                           std::string_view agent_id,
                           std::string_view envelope_id,
                           std::string_view message, Done<void> done,
                           Dispatch dispatch = Dispatch::kAsync);
  void append_audit(std::string_view json_object, Done<void> done,
                    Dispatch dispatch = Dispatch::kAsync);
  void observe_task(TaskMetadata metadata,
                    std::optional<ConnectionAgents> connection, Done<void> done,
                    Dispatch dispatch = Dispatch::kAsync);
  void update_task(std::string_view task_id, const TaskUpdate& update,
                   std::optional<ConnectionAgents> connection, Done<void> done,
                   Dispatch dispatch = Dispatch::kAsync);
  void checkpoint_task(std::string_view task_id, JsonText state,
                       std::optional<ConnectionAgents> connection,
                       Done<void> done, Dispatch dispatch = Dispatch::kAsync);

  // While one lives, the completion-style calls of its thread on this hub
  // only queue their changes, and its end stages them together, under one
  // hold of the writer lock (unless another thread is staging, which takes
  // them): for a server handing over every request of one read. Lives on
  // one thread, inside the hub's lifetime; batches nest.
  class SubmissionBatch {
   public:
    explicit SubmissionBatch(Hub& hub);
    ~SubmissionBatch();
    SubmissionBatch(const SubmissionBatch&) = delete;
    SubmissionBatch& operator=(const SubmissionBatch&) = delete;

   private:
    Committer& committer_;
  };

  // --- Health --------------------------------------------------------------
  // A snapshot; never waits for the writer lock or a sync.
  HubHealth health() const;
  // Appends a tenant's own audit record (the kind set is open):
  // a JSON object with string "at" and "kind". Anything else is refused
  // with kInvalid and nothing is written.
  Result<void> append_audit(std::string_view json_object);

  const Clock& clock() const;
  log::LogStore& store() const;

 private:
  explicit Hub(HubOptions options);

  // Folds the whole log into the state (hydrate, and after a transient
  // failure of the log).
  Result<void> hydrate();
  // Folds the records from log sequence `first` on into the state.
  Result<void> fold_log_from(std::uint64_t first);
  // Starts the writer, then expires what a previous writer left pending.
  Result<void> start_writing();
  // The Committer's fold hook: a batch the log has just sequenced.
  Result<void> fold(Commit& batch);

  // Declared in the order they are built; each refers to those before.
  std::unique_ptr<HubCore> core_;
  std::unique_ptr<StateReads> reads_;
  std::unique_ptr<Delivery> delivery_;
  std::unique_ptr<Committer> committer_;
  std::unique_ptr<Identities> identities_;
  std::unique_ptr<TaskMutations> tasks_;
  std::unique_ptr<ChannelLifecycle> channels_;
  std::unique_ptr<PostPipeline> posts_;
  std::unique_ptr<PeriodicWork> periodic_;
  // A standby's store, which take_over() hands the writable log to; null
  // once it has (and for a hub open() opened).
  log::HandoverLogStore* standby_store_ = nullptr;
  std::uint64_t folded_through_ = 0;  // the last log sequence folded
};

}  // namespace parley::engine
