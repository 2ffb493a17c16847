// The hub: AG2's hub API (spec §10) over an event-sourced log.
//
// Every state change is validated against the folded state, written to the
// log as one atomic batch of records, and only then folded into the state
// (engine/state/hub_state.h) — the same fold hydrate runs when a hub opens on
// an existing store. A rejected call writes nothing.
//
// Threading: every member is thread-safe. Mutations are serialised by one
// writer lock, held from validation until the log has sequenced the batch
// and it is folded; the caller then waits for the batch to be durable
// without the lock, so concurrent mutations share one group commit. Posts
// take the lock in turns of many: concurrent posts queue, and one of their
// threads runs the whole queue through the pipeline under one hold of the
// lock (engine/hub/hub_post.cc). Reads take a shared lock on the folded state
// and never wait for a sync. Deliveries run on the calling thread after
// the writer lock is released, so a subscriber may call back into the hub
// (an invitee acking its invite).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/adapters/adapter_registry.h"
#include "engine/base/clock.h"
#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/base/ids.h"
#include "engine/expectations/expectation_registry.h"
#include "engine/hub/arbiter.h"
#include "engine/hub/delivery_queue.h"
#include "engine/hub/hub_health.h"
#include "engine/hub/hub_listener.h"
#include "engine/hub/mpsc_queue.h"
#include "engine/hub/rate_limiter.h"
#include "engine/registry/auth.h"
#include "engine/state/hub_state.h"
#include "engine/tasks/task.h"
#include "engine/tasks/task_access.h"
#include "log/log_store.h"

namespace parley::engine {

struct HubOptions {
  std::shared_ptr<log::LogStore> store;  // required; the hub closes it
  std::shared_ptr<const Clock> clock;    // default: SystemClock
  // How long create_channel waits for every invitee's ack (spec §4.3).
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
  // Expectation evaluators and handlers (spec §6.1), registered after the
  // built-ins (which come with register_default_adapters), replacing
  // same-named ones.
  std::vector<std::shared_ptr<const ExpectationEvaluator>>
      expectation_evaluators;
  std::vector<std::shared_ptr<const ExpectationHandler>> expectation_handlers;
};

struct CreateChannelRequest {
  std::string creator_id;
  std::string manifest_type;
  std::int64_t manifest_version = 1;
  std::vector<std::string> participants;
  std::optional<std::int64_t> required_acks;
  std::optional<DurationSpec> ttl;  // default: the creator's rule
  std::optional<JsonText> knobs;    // a JSON object
  std::optional<std::string> intent;
  std::optional<JsonText> labels;  // a JSON object of strings
};

struct PendingTurn {
  std::string channel_id;
  std::optional<std::string> triggering_envelope_id;
  std::string expected_at;
};

// Receives the envelopes delivered to one agent (spec §1.4). Called on the
// posting thread, outside every hub lock, possibly from several threads at
// once.
using DeliveryCallback =
    std::function<void(const std::string& recipient_id, const Envelope&)>;

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

  // --- Identity (spec §3) ---------------------------------------------
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

  // A Hello's admission (ADR 0021): the agent registered as `name`
  // re-attaches, proving itself with `claim_json` (the Hello's auth_claim as
  // JSON text) under `scheme`, which must be the scheme it registered with.
  // Checks nothing else and binds nothing. Returns its agent id, or:
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

  // --- Channels (spec §4) ---------------------------------------------
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

  // The post pipeline (spec §4.7); returns the minted envelope id.
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

  // One TTL sweep (spec §4.4, §8.5): every non-terminal channel whose
  // expires_at <= now is expired with reason "ttl_expired", then every live
  // task whose expires_at <= now, with error "ttl_expired".
  Result<void> expire_due();

  // --- Expectations (spec §6; engine/hub/hub_expectations.cc) --------------
  // One expectation tick at the clock's now: every non-terminal channel's
  // manifest expectations are evaluated in order; each new (expectation
  // index, violator) is logged with its audit record and its handler's
  // effects as one batch, then the listeners hear of it. A channel that
  // closes stops its own tick only; a failing channel is reported on
  // stderr and the others still run (its error is returned at the end).
  // Returns how many firings were logged. Does nothing when either
  // registry is empty.
  Result<std::size_t> tick_expectations();
  // Re-registering a name replaces it.
  void register_expectation_evaluator(
      std::shared_ptr<const ExpectationEvaluator> evaluator);
  void register_expectation_handler(
      std::shared_ptr<const ExpectationHandler> handler);

  // --- Delivery (spec §1.4, §7.6) ---------------------------------------
  // Binds `agent_id`'s deliveries to `callback`, replacing an earlier one.
  void subscribe(std::string_view agent_id, DeliveryCallback callback);
  // Binds `agent_id`'s deliveries to a new queue the caller pops from.
  std::shared_ptr<DeliveryQueue> subscribe_queue(std::string_view agent_id);
  void unsubscribe(std::string_view agent_id);

  // A receipt (spec §7.6): an "ack" from a registered recipient for a
  // channel moves its cursor there to `envelope_id` when that is greater.
  // Other statuses, unknown recipients and empty ids change nothing.
  Result<void> acknowledge(std::string_view recipient_id,
                           std::string_view channel_id,
                           std::string_view envelope_id,
                           std::string_view status = "ack");
  // The highest acked envelope id of the agent in the channel, or "".
  std::string inbox_cursor(std::string_view agent_id,
                           std::string_view channel_id) const;
  // What a reconnecting agent missed (spec §7.6 "Replay on reconnect"):
  // per non-terminal channel it takes part in, in channel order, every
  // envelope after max(cursor, since_envelope_id) that another sender
  // addressed to it (audience null or listing it), in log order.
  Result<std::vector<Envelope>> replay_for(
      std::string_view agent_id, std::string_view since_envelope_id) const;

  // --- Audit (spec §2.4) -------------------------------------------------
  // A client's notify handler crashed (spec §10): audit "turn_failed".
  // Over the wire AG2 reports every such crash as a RuntimeError.
  Result<void> report_turn_failure(std::string_view channel_id,
                                   std::string_view agent_id,
                                   std::string_view envelope_id,
                                   std::string_view message);
  // Every audit record in log order, as AG2 JSON objects.
  Result<std::vector<JsonText>> read_audit() const;

  // --- Tasks (spec §8; engine/hub/hub_tasks.cc) ------------------------------
  // `connection`, on the task calls that take it: the agents bound to the
  // wire connection the request came from. When given, check_task_access
  // (engine/tasks/task_access.h) must pass for the task id in the same hold
  // of the hub's lock as the read or change, else its access_denied is
  // returned and nothing is written. In-process callers pass none.
  //
  // A task the owner's runtime reports. A known id is updated in place
  // (state always; started_at, expires_at, channel_id when given; progress
  // merged). A new id needs a registered owner, a valid id (ADR 0021),
  // room under the owner's max_concurrent_tasks and, when it names a
  // channel, a channel the owner takes part in; without expires_at it
  // expires after the owner's task_ttl_default.
  Result<void> observe_task(
      TaskMetadata metadata,
      std::optional<ConnectionAgents> connection = std::nullopt);
  // Unknown id: not_found "task not found: <id>". A terminal task is left
  // as it is (terminal is final). A terminal new state stamps completed_at
  // and, in the same batch, writes the task_terminated audit record and,
  // for a capability-tagged task, the owner's observation (spec §8.6).
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

  // --- Health (spec §10, §12.4) ------------------------------------------
  // A snapshot; never waits for the writer lock or a sync.
  HubHealth health() const;
  // Appends a tenant's own audit record (spec §2.4: the kind set is open):
  // a JSON object with string "at" and "kind". Anything else is refused
  // with kInvalid and nothing is written.
  Result<void> append_audit(std::string_view json_object);

  const Clock& clock() const { return *clock_; }
  log::LogStore& store() const { return *store_; }

 private:
  explicit Hub(HubOptions options);

  struct Delivery;
  struct Commit;
  struct PostRequest;

  // Folds the whole log into the (empty) state; hydrate_locked() with
  // state_mutex_ held.
  Result<void> hydrate();
  Result<void> hydrate_locked();
  Result<void> expire_orphaned_pending();
  // Appends `batch` as one atomic batch and folds it into the state as soon
  // as the log has sequenced it; then releases `writer` (which must hold
  // writer_) so the next mutation can join the same group commit, and
  // waits until the batch is durable. On return `writer` is released unless
  // the log refused the batch before sequencing it. A failure after the
  // fold leaves the hub refusing every later mutation.
  Result<void> commit(Commit& batch, std::unique_lock<std::mutex>& writer);
  // Folds a batch the log has just sequenced at `positions` and plans its
  // deliveries. Caller holds writer_.
  Result<void> fold_sequenced(Commit& batch,
                              std::span<const log::Position> positions);
  // Fails with kStorage when the hub is closed or stopped accepting changes.
  Result<void> check_accepting() const;
  // After a failed log write or fold: every later mutation is refused with
  // the first such `error` until the hub is reopened.
  void stop_accepting_changes(const Error& error);
  // After a log write that failed after sequencing: the same, unless the
  // disk filled up (kNoSpace), from which the hub recovers by itself once
  // the log can resume (recover_after_full_disk).
  void stop_accepting_changes(const log::Error& error);
  // Takes writer_ for a mutation, having first recovered from a full disk
  // when the hub stopped for one and the log can resume.
  std::unique_lock<std::mutex> lock_writer();
  // Caller holds writer_. When the hub stopped because the disk filled up:
  // resumes the log (log::LogStore::resume) and, once it accepts appends
  // again, rebuilds the state from the log (the batches that failed had
  // been folded already) and accepts changes again. Otherwise does nothing.
  void recover_after_full_disk();
  // commit(), then publish() once `writer` is released.
  Result<void> commit_and_publish(Commit& batch,
                                  std::unique_lock<std::mutex>& writer);
  // Adds the batch's audit records to audit_bytes_ once it is durable.
  void count_audit_bytes(const Commit& batch);
  // Runs once `batch` is durable, outside every hub lock: delivers its
  // envelopes and tells the listeners its events, interleaved as
  // Commit::StagedEvent::after says.
  void publish(const Commit& batch);
  void deliver(std::span<const Delivery> deliveries);
  // Tells every listener `event`, in order; a listener that throws is
  // reported on stderr and skipped (spec §12.3). Call with no hub lock.
  void tell(const std::function<void(HubListener&)>& event) const;
  // Stage listener events into `batch` (engine/hub/hub_events.cc); no-ops
  // without listeners. Channel payloads get "metadata" as it is when told.
  void stage_agent_event(Commit& batch, std::string_view agent_id,
                         std::string_view kind, nlohmann::json payload) const;
  void stage_channel_event(Commit& batch, std::string_view channel_id,
                           std::string_view kind, nlohmann::json payload) const;
  // on_envelope_posted for the envelope staged last.
  void stage_envelope_posted(Commit& batch) const;

  // The post pipeline; on failure `envelope` is as it was passed.
  Result<std::string> accept_post(Envelope& envelope);
  // Runs the queued posts through the pipeline unless another thread is
  // doing so, then flushes the log (engine/hub/hub_post.cc).
  void run_posts();
  // Spec §4.7 for one queued post, up to its deferred append and fold;
  // the envelope id, or why the post is refused. Caller holds writer_.
  Result<std::string> sequence_post(PostRequest& request);
  // Idempotent posts (engine/hub/hub_idempotency.cc); callers hold writer_.
  // The id of the post `retry` repeats under index key `key`, nullopt for
  // a new key, or kConflict when the key was used with another payload.
  Result<std::optional<std::string>> idempotent_original(
      std::string_view key, const Envelope& retry) const;
  // Indexes the batch's first staged envelope under `key` and remembers it
  // until forget_in_flight(batch), once the batch is durable or failed.
  void stage_idempotency_key(Commit& batch, std::string key);
  void forget_in_flight(const Commit& batch);

  // Pieces of the pipelines; callers hold writer_.
  Result<void> check_send_rules(const AgentRecord& sender,
                                const Envelope& envelope) const;
  Result<void> check_inboxes(const ChannelEntry& channel,
                             const Envelope& envelope) const;
  void stage_terminal(Commit& commit, const ChannelEntry& channel,
                      ChannelState state, std::string_view reason);
  Envelope hub_envelope(const ChannelMetadata& metadata,
                        std::string_view event_type, nlohmann::json data,
                        std::optional<std::vector<std::string>> audience);
  std::vector<Delivery> recipients_of(
      const ChannelMetadata& metadata,
      const std::shared_ptr<const Envelope>& envelope) const;
  Result<ChannelMetadata> wait_for_handshake(std::string_view channel_id);
  // Evaluates one channel's expectations and fires its new keys.
  Result<std::size_t> tick_channel(std::string_view channel_id);
  // Logs one new (index, violator) of `channel_id` with `handler`'s effects,
  // unless it fired before; sets `terminal` when the channel is (or is now)
  // terminal. Returns whether it fired.
  Result<bool> fire_expectation(std::string_view channel_id, std::size_t index,
                                const Violation& violation,
                                std::string_view violator,
                                const ExpectationHandler& handler,
                                bool& terminal);
  // Moves the channel to `state` (closed or expired) with `reason`, unless
  // it is already terminal, or `pending_only` and no longer pending; returns
  // its metadata either way.
  Result<ChannelMetadata> terminate_channel(std::string_view channel_id,
                                            ChannelState state,
                                            std::string_view reason,
                                            bool pending_only = false);
  std::string now() const;
  // Tasks (engine/hub/hub_tasks.cc); callers hold writer_.
  // Spec §4.4 step 2: expires the channel's live tasks ("channel_closed").
  void stage_task_cascade(Commit& batch, std::string_view channel_id);
  // Stages `task` (already moved to a terminal state) with its audit
  // record, listener event and the owner's observation. `resumes` holds
  // owners' resumes already changed earlier in the same batch.
  void stage_task_terminal(Commit& batch, const TaskMetadata& task,
                           std::string_view reason,
                           std::map<std::string, Resume, std::less<>>& resumes);
  // ADR 0021 §2.5: the one post a non-participant may make.
  bool admits_cancel_request(const ChannelMetadata& channel,
                             const Envelope& envelope) const;
  // The task half of a TTL sweep: live tasks whose expires_at <= now.
  Result<void> expire_due_tasks();
  // Stages an observation (spec §8.6) onto `resume` (the owner's current
  // resume, updated in place) and its audit record.
  void stage_observation(Commit& batch, std::string_view owner_id,
                         Resume& resume, std::string_view capability,
                         std::string_view outcome,
                         std::optional<double> latency_ms,
                         const std::optional<std::string>& task_id);

  std::shared_ptr<log::LogStore> store_;
  std::shared_ptr<const Clock> clock_;
  std::shared_ptr<const AuthRegistry> auth_;
  const std::chrono::milliseconds invite_ack_timeout_;
  AdapterRegistry adapters_;
  ExpectationRegistry expectations_;
  const std::vector<std::shared_ptr<HubListener>> listeners_;
  const std::shared_ptr<const Arbiter> arbiter_;
  EnvelopeIdMinter minter_;

  mutable std::mutex writer_;              // serialises every mutation
  mutable std::shared_mutex state_mutex_;  // guards state_
  HubState state_;
  std::condition_variable_any lifecycle_changed_;  // on state_mutex_
  int handshake_waiters_ = 0;                      // guarded by state_mutex_
  std::atomic<bool> closed_ = false;               // set under writer_
  mutable std::mutex failure_mutex_;
  std::optional<std::string> failure_;   // guarded by failure_mutex_
  bool failure_is_full_disk_ = false;    // guarded by failure_mutex_
  MpscQueue<PostRequest> posts_;         // posts waiting for the pipeline
  std::atomic<bool> combining_ = false;  // a thread is running posts_

  RateLimiter rate_limiter_;                   // guarded by writer_
  std::atomic<std::int64_t> audit_bytes_ = 0;  // see HubHealth
  // Index key -> staged post whose batch is not durable yet.
  mutable std::mutex idempotency_mutex_;
  std::map<std::string, std::shared_ptr<const Envelope>, std::less<>>
      idempotency_in_flight_;

  mutable std::mutex delivery_mutex_;  // guards the two maps below
  std::map<std::string, DeliveryCallback, std::less<>> subscribers_;
  // Substantive deliveries not yet answered by a post (spec §12.1).
  std::map<std::string, std::int64_t, std::less<>> pending_inbox_;
};

}  // namespace parley::engine
