// The facade: builds the hub's parts, opens and closes the hub, and hands
// each call to the part that does it.
#include "engine/hub/hub.h"

#include "engine/adapters/builtin_adapters.h"
#include "engine/base/input_limits.h"
#include "engine/expectations/builtin_evaluators.h"
#include "engine/expectations/builtin_handlers.h"
#include "engine/hub/channel_lifecycle.h"
#include "engine/hub/commit.h"
#include "engine/hub/committer.h"
#include "engine/hub/delivery.h"
#include "engine/hub/dispatch.h"
#include "engine/hub/hub_core.h"
#include "engine/hub/identities.h"
#include "engine/hub/periodic_work.h"
#include "engine/hub/post_pipeline.h"
#include "engine/hub/state_reads.h"
#include "engine/hub/task_mutations.h"
#include "engine/state/log_prefetcher.h"
#include "log/handover_log_store.h"

namespace parley::engine {

Hub::Hub(HubOptions options)
    : core_(std::make_unique<HubCore>(std::move(options.store))) {
  HubCore& core = *core_;
  core.clock = options.clock ? std::move(options.clock)
                             : std::make_shared<const SystemClock>();
  core.auth = options.auth ? std::move(options.auth)
                           : std::make_shared<const AuthRegistry>();
  core.invite_ack_timeout = options.invite_ack_timeout;
  core.listeners = std::move(options.listeners);
  core.arbiter = options.arbiter ? std::move(options.arbiter)
                                 : std::make_shared<RuleBasedArbiter>();
  if (options.register_default_adapters) {
    for (auto& adapter : builtin_adapters())
      core.adapters.add(std::move(adapter));
  }
  for (auto& adapter : options.adapters) core.adapters.add(std::move(adapter));
  if (options.register_default_adapters) {
    for (auto& evaluator : builtin_evaluators()) {
      core.expectations.add(std::move(evaluator));
    }
    for (auto& handler : builtin_handlers()) {
      core.expectations.add(std::move(handler));
    }
  }
  for (auto& evaluator : options.expectation_evaluators) {
    core.expectations.add(std::move(evaluator));
  }
  for (auto& handler : options.expectation_handlers) {
    core.expectations.add(std::move(handler));
  }
  reads_ = std::make_unique<StateReads>(core);
  delivery_ = std::make_unique<Delivery>(core);
  committer_ = std::make_unique<Committer>(
      *core.store, core.writer,
      Committer::Hooks{
          .fold = [this](Commit& batch) { return fold(batch); },
          .publish = [this](const Commit& batch) { delivery_->publish(batch); },
          .rehydrate = [this]() -> Result<void> {
            {
              log::WriterLock lock(core_->state_mutex);
              core_->state.reset();
            }
            auto hydrated = hydrate();
            core_->lifecycle_changed.notify_all();
            return hydrated;
          }});
  identities_ = std::make_unique<Identities>(core, *reads_, *delivery_);
  tasks_ = std::make_unique<TaskMutations>(core, *identities_);
  channels_ = std::make_unique<ChannelLifecycle>(core, *reads_, *committer_,
                                                 *delivery_, *tasks_);
  posts_ = std::make_unique<PostPipeline>(core, *reads_, *delivery_, *channels_,
                                          *tasks_);
  periodic_ = std::make_unique<PeriodicWork>(core, *reads_, *committer_,
                                             *channels_, *tasks_);
}

Hub::~Hub() { (void)close(); }

Result<std::unique_ptr<Hub>> Hub::open(HubOptions options) {
  if (!options.store) return invalid("a hub needs a log store");
  std::unique_ptr<Hub> hub(new Hub(std::move(options)));
  if (auto hydrated = hub->hydrate(); !hydrated) {
    return std::unexpected(hydrated.error());
  }
  if (auto started = hub->start_writing(); !started) {
    return std::unexpected(started.error());
  }
  return hub;
}

Result<std::unique_ptr<Hub>> Hub::open_standby(HubOptions options) {
  if (!options.store) return invalid("a hub needs a log store");
  auto stand_in =
      std::make_shared<log::HandoverLogStore>(std::move(options.store));
  log::HandoverLogStore* view = stand_in.get();
  options.store = std::move(stand_in);
  std::unique_ptr<Hub> hub(new Hub(std::move(options)));
  if (auto hydrated = hub->hydrate(); !hydrated) {
    return std::unexpected(hydrated.error());
  }
  hub->standby_store_ = view;
  return hub;
}

Result<std::uint64_t> Hub::follow(std::chrono::milliseconds timeout) {
  if (!standby_store_) return invalid("follow(): this hub is not a standby");
  if (core_->store->wait_for_append(folded_through_, timeout) >
      folded_through_) {
    if (auto folded = fold_log_from(folded_through_ + 1); !folded) {
      return std::unexpected(folded.error());
    }
  }
  return folded_through_;
}

Result<void> Hub::take_over(std::unique_ptr<log::LogStore> writable) {
  if (!standby_store_ || !writable) {
    return invalid("take_over(): this hub is not a standby");
  }
  log::HandoverLogStore* view = std::exchange(standby_store_, nullptr);
  if (auto handed = view->hand_over(std::move(writable)); !handed) {
    return storage_error(handed.error());
  }
  if (auto folded = fold_log_from(folded_through_ + 1); !folded) {
    return folded;
  }
  return start_writing();
}

Result<void> Hub::start_writing() {
  committer_->start();
  return periodic_->expire_orphaned_pending();
}

Hub::SubmissionBatch::SubmissionBatch(Hub& hub) : committer_(*hub.committer_) {
  committer_.begin_batch();
}

Hub::SubmissionBatch::~SubmissionBatch() { committer_.end_batch(); }

Result<void> Hub::close() {
  if (core_->closed.exchange(true)) return {};
  channels_->close();
  committer_->close();
  Committer::StagingLock writer(*committer_);
  if (auto closed = core_->store->close(); !closed) {
    return storage_error(closed.error());
  }
  return {};
}

Result<void> Hub::hydrate() { return fold_log_from(1); }

Result<void> Hub::fold_log_from(std::uint64_t first) {
  log::WriterLock lock(core_->state_mutex);
  LogPrefetcher log(*core_->store, first);
  while (auto batch = log.next()) {
    for (std::size_t i = 0; i < batch->size(); ++i) {
      if (auto folded =
              core_->state.apply(batch->log_sequence(i), batch->record(i));
          !folded) {
        return folded;
      }
      folded_through_ = batch->log_sequence(i);
    }
  }
  if (auto read = log.result(); !read) return storage_error(read.error());
  core_->minter.observe(core_->state.largest_envelope_id);
  return {};
}

Result<void> Hub::fold(Commit& batch) {
  log::WriterLock lock(core_->state_mutex);
  Result<void> folded;
  for (std::size_t i = 0; i < batch.entries.size() && folded; ++i) {
    const log::AppendEntry& entry = batch.entries[i];
    folded = core_->state.apply(entry.position.log_sequence, entry.record);
  }
  for (std::size_t i = 0; i < batch.envelopes.size(); ++i) {
    auto& staged = batch.envelopes[i];
    staged.envelope->sequence =
        batch.entries[staged.entry].position.channel_sequence;
    if (!staged.deliver) continue;
    const ChannelEntry* channel =
        core_->state.channels.find(staged.envelope->channel_id);
    if (!channel) continue;
    delivery_->check_same_state(*core_);
    delivery_->plan(channel->metadata, staged.envelope, i, batch.deliveries);
  }
  channels_->check_same_state(*core_);
  channels_->folded(batch);
  return folded;
}

// --- Identity ----------------------------------------------------------------

Result<Passport> Hub::register_identity(Passport passport, Resume resume,
                                        std::optional<std::string> skill_md,
                                        std::optional<Rule> rule,
                                        std::vector<std::string> owners) {
  return run_inline<Passport>([&](Done<Passport> done) {
    register_identity(std::move(passport), std::move(resume),
                      std::move(skill_md), std::move(rule), std::move(owners),
                      std::move(done), Dispatch::kInline);
  });
}

void Hub::register_identity(Passport passport, Resume resume,
                            std::optional<std::string> skill_md,
                            std::optional<Rule> rule,
                            std::vector<std::string> owners,
                            Done<Passport> done, Dispatch dispatch) {
  run(*committer_,
      identities_->register_identity(std::move(passport), std::move(resume),
                                     std::move(skill_md), std::move(rule),
                                     std::move(owners)),
      std::move(done), dispatch);
}

Result<void> Hub::unregister(std::string_view agent_id) {
  return run_inline<void>([&](Done<void> done) {
    unregister(agent_id, std::move(done), Dispatch::kInline);
  });
}

void Hub::unregister(std::string_view agent_id, Done<void> done,
                     Dispatch dispatch) {
  run(*committer_,
      and_then(
          identities_->unregister(std::string(agent_id)),
          [this, id = std::string(agent_id)] { posts_->forget_sender(id); }),
      std::move(done), dispatch);
}

Result<void> Hub::set_resume(std::string_view agent_id, Resume resume) {
  return run_inline<void>([&](Done<void> done) {
    set_resume(agent_id, std::move(resume), std::move(done), Dispatch::kInline);
  });
}

void Hub::set_resume(std::string_view agent_id, Resume resume, Done<void> done,
                     Dispatch dispatch) {
  run(*committer_,
      identities_->set_resume(std::string(agent_id), std::move(resume)),
      std::move(done), dispatch);
}

Result<void> Hub::set_skill(std::string_view agent_id,
                            std::optional<std::string> skill_md) {
  return run_inline<void>([&](Done<void> done) {
    set_skill(agent_id, std::move(skill_md), std::move(done),
              Dispatch::kInline);
  });
}

void Hub::set_skill(std::string_view agent_id,
                    std::optional<std::string> skill_md, Done<void> done,
                    Dispatch dispatch) {
  run(*committer_,
      identities_->set_skill(std::string(agent_id), std::move(skill_md)),
      std::move(done), dispatch);
}

Result<void> Hub::set_rule(std::string_view agent_id, Rule rule) {
  return run_inline<void>([&](Done<void> done) {
    set_rule(agent_id, std::move(rule), std::move(done), Dispatch::kInline);
  });
}

void Hub::set_rule(std::string_view agent_id, Rule rule, Done<void> done,
                   Dispatch dispatch) {
  run(*committer_,
      identities_->set_rule(std::string(agent_id), std::move(rule)),
      std::move(done), dispatch);
}

Result<void> Hub::record_observation(std::string_view owner_id,
                                     std::string_view capability,
                                     std::string_view outcome,
                                     std::optional<double> latency_ms,
                                     std::optional<std::string> task_id) {
  return run_inline<void>([&](Done<void> done) {
    record_observation(owner_id, capability, outcome, latency_ms,
                       std::move(task_id), std::move(done), Dispatch::kInline);
  });
}

void Hub::record_observation(std::string_view owner_id,
                             std::string_view capability,
                             std::string_view outcome,
                             std::optional<double> latency_ms,
                             std::optional<std::string> task_id,
                             Done<void> done, Dispatch dispatch) {
  run(*committer_,
      identities_->record_observation(
          std::string(owner_id), std::string(capability), std::string(outcome),
          latency_ms, std::move(task_id)),
      std::move(done), dispatch);
}

Result<std::string> Hub::authenticate(std::string_view name,
                                      std::string_view scheme,
                                      std::string_view claim_json) const {
  return identities_->authenticate(name, scheme, claim_json);
}

Result<Passport> Hub::get_agent(std::string_view name_or_id) const {
  return reads_->get_agent(name_or_id);
}
std::optional<std::string> Hub::find_agent_id(std::string_view name) const {
  return reads_->find_agent_id(name);
}
std::string Hub::name_for(std::string_view agent_id,
                          std::optional<std::string_view> fallback) const {
  return reads_->name_for(agent_id, fallback);
}
Result<Resume> Hub::get_resume(std::string_view agent_id) const {
  return reads_->get_resume(agent_id);
}
Result<Rule> Hub::get_rule(std::string_view agent_id) const {
  return reads_->get_rule(agent_id);
}
std::optional<std::string> Hub::get_skill(std::string_view agent_id) const {
  return reads_->get_skill(agent_id);
}
std::vector<Passport> Hub::list_agents(const AgentFilter& filter) const {
  return reads_->list_agents(filter);
}
std::vector<std::string> Hub::agents_with_capability(
    std::string_view capability) const {
  return reads_->agents_with_capability(capability);
}
std::vector<std::string> Hub::agent_owners(std::string_view agent_id) const {
  return reads_->agent_owners(agent_id);
}

// --- Channels ------------------------------------------------------------

Result<ChannelMetadata> Hub::create_channel(
    const CreateChannelRequest& request) {
  return channels_->create(request);
}

void Hub::create_channel(const CreateChannelRequest& request,
                         Done<ChannelMetadata> done, Dispatch dispatch) {
  if (dispatch == Dispatch::kInline) {
    done(channels_->create(request));
  } else {
    channels_->create_async(request, std::move(done));
  }
}

Result<ChannelMetadata> Hub::close_channel(std::string_view channel_id,
                                           std::string_view reason) {
  return channels_->terminate_now(channel_id, ChannelState::kClosed,
                                  reason.empty() ? "explicit_close" : reason);
}

void Hub::close_channel(std::string_view channel_id, std::string_view reason,
                        Done<ChannelMetadata> done, Dispatch dispatch) {
  if (dispatch == Dispatch::kInline) {
    done(close_channel(channel_id, reason));
    return;
  }
  channels_->terminate_async(
      std::string(channel_id), ChannelState::kClosed,
      std::string(reason.empty() ? "explicit_close" : reason),
      /*pending_only=*/false, std::move(done));
}

Result<ChannelMetadata> Hub::get_channel(std::string_view channel_id) const {
  return reads_->get_channel(channel_id);
}

std::vector<ChannelMetadata> Hub::list_channels(
    std::optional<std::string_view> agent_id, std::optional<ChannelState> state,
    std::size_t limit) const {
  return reads_->list_channels(agent_id, state, limit);
}

Result<std::string> Hub::post_envelope(Envelope envelope) {
  return run_inline<std::string>([&](Done<std::string> done) {
    post_envelope(std::move(envelope), std::move(done), Dispatch::kInline);
  });
}

// A post refused before its batch was staged is told to the listeners
// (on_envelope_rejected) with the envelope as it was passed; storage
// failures are not.
void Hub::post_envelope(Envelope envelope, Done<std::string> done,
                        Dispatch dispatch) {
  post_envelope(std::make_shared<Envelope>(std::move(envelope)),
                std::move(done), dispatch);
}

void Hub::post_envelope(std::shared_ptr<Envelope> posted,
                        Done<std::string> done, Dispatch dispatch) {
  auto tell = [this, posted,
               done = std::move(done)](Result<std::string> result) {
    if (!result && result.error().kind != ErrorKind::kStorage) {
      const Error& error = result.error();
      core_->tell([&](HubListener& listener) {
        listener.on_envelope_rejected(*posted, error);
      });
    }
    done(std::move(result));
  };
  if (auto checked = check_envelope(*posted); !checked) {
    tell(std::unexpected(checked.error()));
    return;
  }
  run(*committer_, posts_->post(posted), std::move(tell), dispatch);
}

Result<std::vector<Envelope>> Hub::read_wal(
    std::string_view channel_id, std::int64_t since,
    std::optional<std::int64_t> until) const {
  return reads_->read_wal(channel_id, since, until);
}

Result<std::optional<Envelope>> Hub::find_envelope_by_causation(
    std::string_view channel_id, std::string_view sender_id,
    std::string_view causation_id) const {
  return reads_->find_envelope_by_causation(channel_id, sender_id,
                                            causation_id);
}

bool Hub::can_send(std::string_view channel_id, std::string_view sender_id,
                   std::optional<std::string_view> event_type) const {
  return reads_->can_send(channel_id, sender_id, event_type);
}

Result<std::optional<JsonText>> Hub::adapter_state(
    std::string_view channel_id) const {
  return reads_->adapter_state(channel_id);
}

std::vector<PendingTurn> Hub::pending_turns_for(
    std::string_view agent_id) const {
  return reads_->pending_turns_for(agent_id);
}

// --- Periodic work ------------------------------------------------------

Result<void> Hub::expire_due() { return periodic_->expire_due(); }

Result<std::size_t> Hub::tick_expectations() {
  return periodic_->tick_expectations();
}

// --- Delivery -------------------------------------------------------------

void Hub::subscribe(std::string_view agent_id, DeliveryCallback callback) {
  delivery_->subscribe(agent_id, std::move(callback));
}

std::shared_ptr<DeliveryQueue> Hub::subscribe_queue(std::string_view agent_id) {
  return delivery_->subscribe_queue(agent_id);
}

void Hub::unsubscribe(std::string_view agent_id) {
  delivery_->unsubscribe(agent_id);
}

Result<void> Hub::acknowledge(std::string_view recipient_id,
                              std::string_view channel_id,
                              std::string_view envelope_id,
                              std::string_view status) {
  return run_inline<void>([&](Done<void> done) {
    acknowledge(recipient_id, channel_id, envelope_id, status, std::move(done),
                Dispatch::kInline);
  });
}

void Hub::acknowledge(std::string_view recipient_id,
                      std::string_view channel_id, std::string_view envelope_id,
                      std::string_view status, Done<void> done,
                      Dispatch dispatch) {
  run(*committer_,
      identities_->acknowledge(std::string(recipient_id),
                               std::string(channel_id),
                               std::string(envelope_id), std::string(status)),
      std::move(done), dispatch);
}

std::string Hub::inbox_cursor(std::string_view agent_id,
                              std::string_view channel_id) const {
  return reads_->inbox_cursor(agent_id, channel_id);
}

Result<std::vector<Envelope>> Hub::replay_for(
    std::string_view agent_id, std::string_view since_envelope_id) const {
  return reads_->replay_for(agent_id, since_envelope_id);
}

// --- Audit ---------------------------------------------------------------

Result<void> Hub::report_turn_failure(std::string_view channel_id,
                                      std::string_view agent_id,
                                      std::string_view envelope_id,
                                      std::string_view message) {
  return run_inline<void>([&](Done<void> done) {
    report_turn_failure(channel_id, agent_id, envelope_id, message,
                        std::move(done), Dispatch::kInline);
  });
}

void Hub::report_turn_failure(std::string_view channel_id,
                              std::string_view agent_id,
                              std::string_view envelope_id,
                              std::string_view message, Done<void> done,
                              Dispatch dispatch) {
  run(*committer_,
      identities_->report_turn_failure(
          std::string(channel_id), std::string(agent_id),
          std::string(envelope_id), std::string(message)),
      std::move(done), dispatch);
}

// --- Health ----------------------------------------------------------------

const Clock& Hub::clock() const { return *core_->clock; }
log::LogStore& Hub::store() const { return *core_->store; }

}  // namespace parley::engine
