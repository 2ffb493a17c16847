#include "engine/hub/post_pipeline.h"

#include <nlohmann/json.hpp>

#include "engine/base/clock.h"
#include "engine/base/event_types.h"
#include "engine/base/idempotency.h"
#include "engine/base/python_repr.h"
#include "engine/hub/listener_events.h"
#include "engine/records/log_records.h"

namespace parley::engine {

Result<std::string> PostPipeline::Post::Stage::operator()(Commit& batch) const {
  pipeline->core_.writer.assert_held();
  return pipeline->stage(envelope, batch);
}

void PostPipeline::Post::Settle::operator()(const Commit& batch,
                                            const Result<std::string>& posted,
                                            bool sequenced) const {
  if (batch.empty()) return;  // refused, or an idempotent retry
  pipeline->forget_in_flight(batch);
  const Envelope& staged = *batch.envelopes.front().envelope;
  // Refused before the log took it: the token stage() spent (it staged the
  // post) is given back.
  if (!posted && !sequenced && is_rate_limited(staged)) {
    pipeline->rate_limiter_.refund(staged.sender_id);
  }
}

bool PostPipeline::is_rate_limited(const Envelope& envelope) {
  return !event_type::is_channel_protocol(envelope.event_type);
}

Result<std::string> PostPipeline::stage(const std::shared_ptr<Envelope>& posted,
                                        Commit& batch) {
  Envelope& envelope = *posted;
  const bool substantive = !event_type::is_protocol(envelope.event_type);
  // 1. sender registered
  const AgentRecord* sender =
      core_.staged_state().registry.find(envelope.sender_id);
  if (!sender) {
    return not_found("sender not registered: " + envelope.sender_id);
  }
  // 1b. a retry of an idempotent post returns the original's id
  std::string idempotency_key;
  if (envelope.idempotency_key && !envelope.idempotency_key->empty()) {
    idempotency_key = post_idempotency_key(
        envelope.channel_id, envelope.sender_id, *envelope.idempotency_key);
    auto original = idempotent_original(idempotency_key, envelope);
    if (!original) return std::unexpected(original.error());
    if (*original) return std::move(**original);
  }
  // 2. the sender's outbound and depth rules, then its rate limit
  if (auto allowed = core_.arbiter->authorize_send(
          core_.staged_state().registry, *sender, envelope);
      !allowed) {
    return std::unexpected(allowed.error());
  }
  // One reading of the clock serves the rate limit and created_at.
  const Timestamp now = core_.clock->now();
  const bool rate_limited = is_rate_limited(envelope);
  if (rate_limited) {  // also drops the bucket of a sender whose limit is off
    if (auto allowed = rate_limiter_.check(*sender, now); !allowed) {
      return std::unexpected(allowed.error());
    }
  }
  // 3-5. the channel and its state
  const ChannelEntry* channel =
      core_.staged_state().channels.find(envelope.channel_id);
  if (!channel) return not_found("channel not found: " + envelope.channel_id);
  const ChannelMetadata& metadata = channel->metadata;
  // Error texts are built only on the paths that return them.
  auto label = [&] { return channel_label(metadata.channel_id); };
  if (is_terminal(metadata.state)) {
    return protocol_error(label() + " is " +
                          std::string(to_string(metadata.state)));
  }
  if (substantive && metadata.state != ChannelState::kActive) {
    return protocol_error(label() + " not active (state=" +
                          std::string(to_string(metadata.state)) + ")");
  }
  // Only participants post, for every caller, wire and in-process; the one
  // exception is a peer's well-formed task cancel request.
  tasks_.check_same_writer(core_);
  if (!metadata.has_participant(envelope.sender_id) &&
      !tasks_.admits_cancel_request(metadata, envelope)) {
    return protocol_error(label() +
                          " only accepts sends from participants, got " +
                          single_quoted(envelope.sender_id));
  }
  // 6. the adapter
  if (!channel->adapter) {
    return protocol_error(label() + " has no registered adapter (manifest " +
                          single_quoted(metadata.manifest.type) + "@v" +
                          std::to_string(metadata.manifest.version) + ")");
  }
  // 7. inbox capacity
  if (substantive) {
    delivery_.check_same_writer(core_);
    if (auto room = delivery_.check_inboxes(metadata, envelope); !room) {
      return std::unexpected(room.error());
    }
  }
  // 8. validate, stamp, decide what follows
  envelope.envelope_id.clear();
  if (auto valid = channel->adapter->validate_send(metadata, view_of(envelope),
                                                   *channel->state);
      !valid) {
    return std::unexpected(valid.error());
  }
  envelope.envelope_id = core_.minter.mint();
  envelope.created_at = format_timestamp(now);
  const std::string_view type = envelope.event_type;
  const bool ack = type == event_type::kChannelInviteAck;
  const bool reject = type == event_type::kChannelInviteReject;
  const bool pending = metadata.state == ChannelState::kPending;
  std::optional<AcceptResult> accepted;
  if (!ack && !reject) {
    const ChannelAdapter& adapter = *channel->adapter;
    if (adapter.on_accepted_reads_state()) {
      auto after = channel->state->clone();
      adapter.fold(view_of(envelope), *after);
      accepted = adapter.on_accepted(metadata, view_of(envelope), *after);
    } else {
      accepted =
          adapter.on_accepted(metadata, view_of(envelope), *channel->state);
    }
  }
  const bool activates = ack && pending && metadata.rejected_by.empty() &&
                         metadata.pending_acks.size() == 1 &&
                         metadata.pending_acks.front() == envelope.sender_id;
  // The batch holds nothing before this point: a staged post has spent its
  // token, if it is rate limited.
  if (rate_limited && sender->rule.limits.rate_per_minute > 0) {
    rate_limiter_.consume(envelope.sender_id);
  }
  batch.add_envelope(posted, /*hub_authored=*/false,
                     /*deliver=*/!ack && !reject);
  batch.drains_sender = substantive;
  if (!idempotency_key.empty()) {
    stage_idempotency_key(batch, std::move(idempotency_key));
  }
  if (!ack && !reject) stage_envelope_posted(core_, reads_, batch);
  if (activates) {
    stage_channel_event(core_, reads_, batch, metadata.channel_id, "opened",
                        {});
    batch.add_envelope(channels_.hub_envelope(
                           metadata, event_type::kChannelOpened,
                           {{"channel_id", metadata.channel_id}}, std::nullopt),
                       /*hub_authored=*/true, /*deliver=*/true);
    stage_envelope_posted(core_, reads_, batch);
  } else if (reject && pending) {
    channels_.check_same_writer(core_);
    channels_.stage_terminal(batch, *channel, ChannelState::kClosed,
                             "invite_rejected");
  } else if (accepted && accepted->next_state &&
             is_terminal(*accepted->next_state)) {
    // A non-terminal next state (no built-in asks for one) is not applied:
    // lifecycle is folded from envelopes, and no envelope marks it.
    channels_.check_same_writer(core_);
    channels_.stage_terminal(batch, *channel, *accepted->next_state,
                             accepted->auto_close_reason);
  }
  return envelope.envelope_id;
}

Result<std::optional<std::string>> PostPipeline::idempotent_original(
    std::string_view key, const Envelope& retry) const {
  std::optional<Envelope> original;
  {
    log::MutexLock lock(idempotency_mutex_);
    if (auto it = idempotency_in_flight_.find(key);
        it != idempotency_in_flight_.end()) {
      original = *it->second;
    }
  }
  if (!original) {
    auto sequence = core_.store->find_idempotency_key(key);
    if (!sequence) {
      return storage_error(sequence.error());
    }
    if (!*sequence) return std::optional<std::string>{};
    auto read = core_.store->read(**sequence, **sequence,
                                  [&](std::uint64_t, std::string_view record) {
                                    original = decode_envelope(record);
                                    return false;
                                  });
    if (!read) {
      return storage_error(read.error());
    }
    if (!original) {
      return fail(ErrorKind::kStorage,
                  "corruption: the idempotency index points at log record " +
                      std::to_string(**sequence) + ", which is no envelope");
    }
  }
  if (!same_post_payload(*original, retry)) {
    return fail(ErrorKind::kConflict,
                "idempotency key '" + *retry.idempotency_key +
                    "' was already used by sender '" + retry.sender_id +
                    "' in channel '" + retry.channel_id +
                    "' with another payload (envelope " +
                    original->envelope_id + ")");
  }
  return std::optional<std::string>(original->envelope_id);
}

void PostPipeline::stage_idempotency_key(Commit& batch, std::string key) {
  const Commit::StagedEnvelope& staged = batch.envelopes.front();
  batch.entries[staged.entry].idempotency_key = key;
  log::MutexLock lock(idempotency_mutex_);
  idempotency_in_flight_.insert_or_assign(std::move(key), staged.envelope);
}

void PostPipeline::forget_in_flight(const Commit& batch) {
  const std::string& key =
      batch.entries[batch.envelopes.front().entry].idempotency_key;
  if (key.empty()) return;  // most posts: no key, no lock
  log::MutexLock lock(idempotency_mutex_);
  if (auto it = idempotency_in_flight_.find(key);
      it != idempotency_in_flight_.end()) {
    idempotency_in_flight_.erase(it);
  }
}

}  // namespace parley::engine
