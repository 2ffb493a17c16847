// The hub's frame: opening and hydrate, the commit of a batch, delivery,
// and the read side. Identity mutations are in hub_identity.cc, channel
// mutations and the post pipeline in hub_channels.cc.
#include "engine/hub/hub.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/adapters/builtin_adapters.h"
#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/expectations/builtin_evaluators.h"
#include "engine/expectations/builtin_handlers.h"
#include "engine/hub/hub_commit.h"
#include "engine/records/log_records.h"
#include "engine/registry/glob.h"
#include "engine/state/log_prefetcher.h"
#include "parley/schemas/log_generated.h"

namespace parley::engine {

namespace {

// Python's slice bounds of [since:until] over `size` elements.
std::pair<std::uint64_t, std::uint64_t> python_slice(
    std::int64_t since, std::optional<std::int64_t> until, std::uint64_t size) {
  const auto n = static_cast<std::int64_t>(size);
  auto clamp = [n](std::int64_t at) {
    if (at < 0) at += n;
    return std::clamp<std::int64_t>(at, 0, n);
  };
  return {static_cast<std::uint64_t>(clamp(since)),
          static_cast<std::uint64_t>(until ? clamp(*until) : n)};
}

}  // namespace

void Hub::Commit::add_envelope(Envelope envelope, bool hub_authored,
                               bool deliver) {
  auto shared = std::make_shared<Envelope>(std::move(envelope));
  entries.push_back(
      {envelope_record(*shared, hub_authored), shared->channel_id});
  envelopes.push_back({entries.size() - 1, std::move(shared), deliver});
}

Hub::Hub(HubOptions options)
    : store_(std::move(options.store)),
      clock_(options.clock ? std::move(options.clock)
                           : std::make_shared<const SystemClock>()),
      auth_(options.auth ? std::move(options.auth)
                         : std::make_shared<const AuthRegistry>()),
      invite_ack_timeout_(options.invite_ack_timeout),
      listeners_(std::move(options.listeners)),
      arbiter_(options.arbiter ? std::move(options.arbiter)
                               : std::make_shared<RuleBasedArbiter>()),
      state_(adapters_) {
  if (options.register_default_adapters) {
    for (auto& adapter : builtin_adapters()) adapters_.add(std::move(adapter));
  }
  for (auto& adapter : options.adapters) adapters_.add(std::move(adapter));
  if (options.register_default_adapters) {
    for (auto& evaluator : builtin_evaluators()) {
      expectations_.add(std::move(evaluator));
    }
    for (auto& handler : builtin_handlers()) {
      expectations_.add(std::move(handler));
    }
  }
  for (auto& evaluator : options.expectation_evaluators) {
    expectations_.add(std::move(evaluator));
  }
  for (auto& handler : options.expectation_handlers) {
    expectations_.add(std::move(handler));
  }
}

Hub::~Hub() { (void)close(); }

Result<std::unique_ptr<Hub>> Hub::open(HubOptions options) {
  if (!options.store) return invalid("a hub needs a log store");
  std::unique_ptr<Hub> hub(new Hub(std::move(options)));
  if (auto hydrated = hub->hydrate(); !hydrated) {
    return std::unexpected(hydrated.error());
  }
  if (auto expired = hub->expire_orphaned_pending(); !expired) {
    return std::unexpected(expired.error());
  }
  return hub;
}

Result<void> Hub::close() {
  {
    // Release handshake waiters and wait until they are gone: they may
    // still need writer_ on their way out.
    std::unique_lock lock(state_mutex_);
    if (closed_.exchange(true)) return {};
    lifecycle_changed_.notify_all();
    lifecycle_changed_.wait(lock, [&] { return handshake_waiters_ == 0; });
  }
  std::lock_guard writer(writer_);
  if (auto closed = store_->close(); !closed) {
    return storage_error(closed.error());
  }
  return {};
}

Result<void> Hub::hydrate() {
  std::unique_lock lock(state_mutex_);
  return hydrate_locked();
}

Result<void> Hub::hydrate_locked() {
  LogPrefetcher log(*store_);
  while (auto batch = log.next()) {
    for (std::size_t i = 0; i < batch->size(); ++i) {
      if (auto folded = state_.apply(batch->log_sequence(i), batch->record(i));
          !folded) {
        return folded;
      }
    }
  }
  if (auto read = log.result(); !read) return storage_error(read.error());
  minter_.observe(state_.largest_envelope_id);
  return {};
}

Result<void> Hub::expire_orphaned_pending() {
  std::vector<std::string> orphans;
  {
    std::shared_lock lock(state_mutex_);
    for (const ChannelEntry* channel : state_.channels.in_order()) {
      if (channel->metadata.state == ChannelState::kPending) {
        orphans.push_back(channel->metadata.channel_id);
      }
    }
  }
  for (const auto& channel_id : orphans) {
    auto expired = terminate_channel(channel_id, ChannelState::kExpired,
                                     "hydrate_orphaned_pending");
    if (!expired) return std::unexpected(expired.error());
  }
  return {};
}

Result<void> Hub::check_accepting() const {
  if (closed_) return fail(ErrorKind::kStorage, "the hub is closed");
  std::lock_guard lock(failure_mutex_);
  if (failure_) return fail(ErrorKind::kStorage, *failure_);
  return {};
}

void Hub::stop_accepting_changes(const Error& error) {
  std::lock_guard lock(failure_mutex_);
  if (failure_) return;
  failure_ = "the hub stopped accepting changes after a failed log write (" +
             error.message + "); reopen it";
}

void Hub::stop_accepting_changes(const log::Error& error) {
  if (error.code != log::ErrorCode::kNoSpace) {
    stop_accepting_changes(storage_error(error).error());
    return;
  }
  std::lock_guard lock(failure_mutex_);
  if (failure_) return;
  failure_ = "the hub stopped accepting changes: the disk filled up while " +
             std::string("the log was written (") + error.message +
             "); it accepts them again by itself once space is freed";
  failure_is_full_disk_ = true;
}

std::unique_lock<std::mutex> Hub::lock_writer() {
  std::unique_lock writer(writer_);
  recover_after_full_disk();
  return writer;
}

void Hub::recover_after_full_disk() {
  {
    std::lock_guard lock(failure_mutex_);
    if (!failure_is_full_disk_) return;
  }
  if (!store_->resume()) return;  // still no room: try again next time
  std::unique_lock lock(state_mutex_);
  state_.reset();
  Result<void> hydrated = hydrate_locked();
  lifecycle_changed_.notify_all();
  lock.unlock();
  std::lock_guard failure(failure_mutex_);
  failure_is_full_disk_ = false;
  if (hydrated) {
    failure_.reset();
  } else {
    failure_ = "the hub stopped accepting changes: rebuilding its state " +
               std::string("after a full disk failed (") +
               hydrated.error().message + "); reopen it";
  }
}

Result<void> Hub::commit(Commit& batch, std::unique_lock<std::mutex>& writer) {
  if (auto accepting = check_accepting(); !accepting) return accepting;
  if (batch.empty()) return {};
  Result<void> folded;
  auto positions = store_->append(
      batch.entries, [&](std::span<const log::Position> positions) {
        folded = fold_sequenced(batch, positions);
        writer.unlock();  // the next mutation may join this group commit
      });
  if (positions && folded) {
    count_audit_bytes(batch);
    return {};
  }
  if (writer.owns_lock()) return storage_error(positions.error());
  // The state already holds a batch the log did not take: stop mutating.
  if (!positions) {
    stop_accepting_changes(positions.error());
    return storage_error(positions.error());
  }
  stop_accepting_changes(folded.error());
  return std::unexpected(folded.error());
}

Result<void> Hub::fold_sequenced(Commit& batch,
                                 std::span<const log::Position> positions) {
  std::unique_lock lock(state_mutex_);
  Result<void> folded;
  for (std::size_t i = 0; i < batch.entries.size() && folded; ++i) {
    folded = state_.apply(positions[i].log_sequence, batch.entries[i].record);
  }
  for (std::size_t i = 0; i < batch.envelopes.size(); ++i) {
    auto& staged = batch.envelopes[i];
    staged.envelope->sequence = positions[staged.entry].channel_sequence;
    if (!staged.deliver) continue;
    const ChannelEntry* channel =
        state_.channels.find(staged.envelope->channel_id);
    if (!channel) continue;
    for (Delivery& delivery :
         recipients_of(channel->metadata, staged.envelope)) {
      delivery.staged = i;
      batch.deliveries.push_back(std::move(delivery));
    }
  }
  lifecycle_changed_.notify_all();
  return folded;
}

// Spec §1.4: the audience, or every participant but the sender. An
// unknown id is replaced by what the arbiter resolves it to, or dropped
// (LIM-11); recipients the arbiter refuses are skipped. Caller holds
// state_mutex_.
std::vector<Hub::Delivery> Hub::recipients_of(
    const ChannelMetadata& metadata,
    const std::shared_ptr<const Envelope>& shared) const {
  const Envelope& envelope = *shared;
  std::vector<std::string> ids;
  if (envelope.audience) {
    for (const auto& id : *envelope.audience) {
      if (state_.registry.find(id)) {
        ids.push_back(id);
      } else if (auto resolved =
                     arbiter_->resolve_unknown_audience(envelope, id)) {
        std::ranges::copy(*resolved, std::back_inserter(ids));
      }
    }
  } else {
    for (const Participant& participant : metadata.participants) {
      if (participant.agent_id != envelope.sender_id) {
        ids.push_back(participant.agent_id);
      }
    }
  }
  const bool substantive = !event_type::is_protocol(envelope.event_type);
  std::vector<Delivery> out;
  for (auto& id : ids) {
    const AgentRecord* recipient = state_.registry.find(id);
    if (!recipient ||
        !arbiter_->authorize_dispatch(state_.registry, envelope, *recipient)) {
      continue;
    }
    Delivery delivery{std::move(id), shared, substantive};
    delivery.inbox_cap = recipient->rule.limits.inbox_max_pending;
    delivery.high_water = recipient->rule.limits.inbox_high_water.value_or(
        std::max<std::int64_t>(1, delivery.inbox_cap * 8 / 10));
    out.push_back(std::move(delivery));
  }
  return out;
}

std::string Hub::now() const { return format_timestamp(clock_->now()); }

// --- Reads -------------------------------------------------------------

Result<Passport> Hub::get_agent(std::string_view name_or_id) const {
  std::shared_lock lock(state_mutex_);
  const AgentRecord* agent = state_.registry.resolve(name_or_id);
  if (!agent) return not_found("agent not found: " + std::string(name_or_id));
  return agent->passport;
}

std::optional<std::string> Hub::find_agent_id(std::string_view name) const {
  std::shared_lock lock(state_mutex_);
  return state_.registry.find_agent_id(name);
}

std::string Hub::name_for(std::string_view agent_id,
                          std::optional<std::string_view> fallback) const {
  std::shared_lock lock(state_mutex_);
  return state_.registry.name_for(agent_id, fallback);
}

Result<Resume> Hub::get_resume(std::string_view agent_id) const {
  std::shared_lock lock(state_mutex_);
  const AgentRecord* agent = state_.registry.find(agent_id);
  if (!agent) return not_found("resume not found: " + std::string(agent_id));
  return agent->resume;
}

Result<Rule> Hub::get_rule(std::string_view agent_id) const {
  std::shared_lock lock(state_mutex_);
  const AgentRecord* agent = state_.registry.find(agent_id);
  if (!agent) return not_found("rule not found: " + std::string(agent_id));
  return agent->rule;
}

std::optional<std::string> Hub::get_skill(std::string_view agent_id) const {
  std::shared_lock lock(state_mutex_);
  const AgentRecord* agent = state_.registry.find(agent_id);
  return agent ? agent->skill_md : std::nullopt;
}

std::vector<Passport> Hub::list_agents(const AgentFilter& filter) const {
  std::shared_lock lock(state_mutex_);
  std::vector<Passport> out;
  for (const AgentRecord* agent : state_.registry.list(filter)) {
    out.push_back(agent->passport);
  }
  return out;
}

std::vector<std::string> Hub::agent_owners(std::string_view agent_id) const {
  std::shared_lock lock(state_mutex_);
  const AgentRecord* agent = state_.registry.find(agent_id);
  return agent ? agent->owners : std::vector<std::string>{};
}

std::vector<std::string> Hub::agents_with_capability(
    std::string_view capability) const {
  std::shared_lock lock(state_mutex_);
  return state_.registry.agents_with_capability(capability);
}

Result<ChannelMetadata> Hub::get_channel(std::string_view channel_id) const {
  std::shared_lock lock(state_mutex_);
  const ChannelEntry* channel = state_.channels.find(channel_id);
  if (!channel)
    return not_found("channel not found: " + std::string(channel_id));
  return channel->metadata;
}

std::vector<ChannelMetadata> Hub::list_channels(
    std::optional<std::string_view> agent_id, std::optional<ChannelState> state,
    std::size_t limit) const {
  std::shared_lock lock(state_mutex_);
  std::vector<ChannelMetadata> out;
  for (const ChannelEntry* channel : state_.channels.in_order()) {
    if (out.size() >= limit) break;
    if (state && channel->metadata.state != *state) continue;
    if (agent_id && !channel->metadata.has_participant(*agent_id)) continue;
    out.push_back(channel->metadata);
  }
  return out;
}

Result<std::vector<Envelope>> Hub::read_wal(
    std::string_view channel_id, std::int64_t since,
    std::optional<std::int64_t> until) const {
  std::uint64_t size = 0;
  {
    std::shared_lock lock(state_mutex_);
    const ChannelEntry* channel = state_.channels.find(channel_id);
    if (!channel) return std::vector<Envelope>{};
    size = channel->last_sequence;
  }
  const auto [begin, end] = python_slice(since, until, size);
  std::vector<Envelope> out;
  if (begin >= end) return out;
  auto read = store_->read_channel(
      channel_id, begin + 1, end,
      [&](std::uint64_t, std::uint64_t, std::string_view record) {
        if (auto envelope = decode_envelope(record)) {
          out.push_back(std::move(*envelope));
        }
        return true;
      });
  if (!read) return storage_error(read.error());
  return out;
}

Result<std::optional<Envelope>> Hub::find_envelope_by_causation(
    std::string_view channel_id, std::string_view sender_id,
    std::string_view causation_id) const {
  std::uint64_t sequence = 0;
  {
    std::shared_lock lock(state_mutex_);
    const ChannelEntry* channel = state_.channels.find(channel_id);
    if (!channel) return std::optional<Envelope>{};
    auto it = channel->causation.find(
        std::pair{std::string(sender_id), std::string(causation_id)});
    if (it == channel->causation.end()) return std::optional<Envelope>{};
    sequence = it->second;
  }
  auto found = read_wal(channel_id, static_cast<std::int64_t>(sequence) - 1,
                        static_cast<std::int64_t>(sequence));
  if (!found) return std::unexpected(found.error());
  if (found->empty()) return std::optional<Envelope>{};
  return std::optional<Envelope>(std::move(found->front()));
}

bool Hub::can_send(std::string_view channel_id, std::string_view sender_id,
                   std::optional<std::string_view> type) const {
  std::shared_lock lock(state_mutex_);
  const ChannelEntry* channel = state_.channels.find(channel_id);
  if (!channel || is_terminal(channel->metadata.state) || !channel->state) {
    return false;
  }
  static const FlexBytes kEmptyText =
      to_flex(nlohmann::json{{"text", ""}}).value();
  const EnvelopeView probe{sender_id, type.value_or(event_type::kText), "",
                           kEmptyText};
  return channel->adapter
      ->validate_send(channel->metadata, probe, *channel->state)
      .has_value();
}

Result<std::optional<JsonText>> Hub::adapter_state(
    std::string_view channel_id) const {
  std::shared_lock lock(state_mutex_);
  const ChannelEntry* channel = state_.channels.find(channel_id);
  if (!channel)
    return not_found("channel not found: " + std::string(channel_id));
  if (!channel->state) return std::optional<JsonText>{};
  return std::optional<JsonText>(channel->state->to_json());
}

std::vector<PendingTurn> Hub::pending_turns_for(
    std::string_view agent_id) const {
  std::vector<PendingTurn> turns;
  {
    std::shared_lock lock(state_mutex_);
    if (!state_.registry.find(agent_id)) return turns;
    for (const ChannelEntry* channel : state_.channels.in_order()) {
      const ChannelMetadata& metadata = channel->metadata;
      if (is_terminal(metadata.state) || !channel->state ||
          !metadata.has_participant(agent_id)) {
        continue;
      }
      auto next = channel->adapter->expected_next(metadata, *channel->state);
      if (!next || next->agent_id != agent_id) continue;
      turns.push_back({metadata.channel_id, next->triggering_envelope_id, ""});
    }
  }
  // The trigger is an adapter's last envelope, so it is nearly always among
  // the channel's newest: look there before reading the whole channel.
  auto created_at_of = [&](const std::string& channel_id,
                           const std::string& envelope_id) -> std::string {
    for (std::int64_t since : {-16, 0}) {
      auto wal = read_wal(channel_id, since);
      if (!wal) return "";
      for (const Envelope& envelope : *wal) {
        if (envelope.envelope_id == envelope_id) return envelope.created_at;
      }
    }
    return "";
  };
  for (PendingTurn& turn : turns) {
    if (turn.triggering_envelope_id) {
      turn.expected_at =
          created_at_of(turn.channel_id, *turn.triggering_envelope_id);
    }
    if (turn.expected_at.empty()) turn.expected_at = now();
  }
  return turns;
}

Result<std::vector<JsonText>> Hub::read_audit() const {
  std::vector<JsonText> out;
  auto read = store_->read(
      1, log::kLastSequence, [&](std::uint64_t, std::string_view record) {
        const schema::Record* root = schema::GetRecord(record.data());
        if (const auto* audit = root->body_as_AuditRecorded()) {
          const auto* payload = audit->record();
          out.push_back(
              flex_to_json({payload->data(), payload->size()}).dump());
        }
        return true;
      });
  if (!read) return storage_error(read.error());
  return out;
}

}  // namespace parley::engine
