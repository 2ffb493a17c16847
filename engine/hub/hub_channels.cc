// Channel mutations (spec §4.3-§4.7): creation and the invite handshake,
// closing and expiry, and the post pipeline (run by engine/hub/hub_post.cc).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/base/idempotency.h"
#include "engine/base/ids.h"
#include "engine/hub/hub.h"
#include "engine/hub/hub_commit.h"
#include "engine/records/log_records.h"
#include "engine/registry/duration.h"
#include "engine/registry/glob.h"

namespace parley::engine {

namespace {

std::string single_quoted(std::string_view id) {
  return "'" + std::string(id) + "'";
}

std::string channel_label(std::string_view channel_id) {
  return "channel " + single_quoted(channel_id);
}

// `text` parsed, when it holds a JSON object.
std::optional<nlohmann::json> parse_object(
    const std::optional<JsonText>& text) {
  if (!text) return nlohmann::json::object();
  auto parsed =
      nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return std::nullopt;
  return parsed;
}

}  // namespace

Envelope Hub::hub_envelope(const ChannelMetadata& metadata,
                           std::string_view type, nlohmann::json data,
                           std::optional<std::vector<std::string>> audience) {
  Envelope envelope;
  envelope.channel_id = metadata.channel_id;
  envelope.sender_id = metadata.creator_id;
  if (!audience) {
    audience.emplace();
    for (const Participant& participant : metadata.participants) {
      audience->push_back(participant.agent_id);
    }
  }
  envelope.audience = std::move(audience);
  envelope.event_type = std::string(type);
  envelope.event_data = to_flex(data).value();
  envelope.envelope_id = minter_.mint();
  envelope.created_at = now();
  return envelope;
}

// Spec §4.4 steps 3-7: the hub's closed/expired envelope (to every
// participant) and the audit record, after the task cascade (step 2).
void Hub::stage_terminal(Commit& batch, const ChannelEntry& channel,
                         ChannelState state, std::string_view reason) {
  stage_task_cascade(batch, channel.metadata.channel_id);
  const bool expired = state == ChannelState::kExpired;
  Envelope envelope = hub_envelope(
      channel.metadata,
      expired ? event_type::kChannelExpired : event_type::kChannelClosed,
      {{"reason", reason}, {"channel_id", channel.metadata.channel_id}},
      std::nullopt);
  const std::string at = envelope.created_at;
  batch.add_envelope(std::move(envelope), /*hub_authored=*/true,
                     /*deliver=*/true);
  batch.add(
      audit_record({{"at", at},
                    {"kind", expired ? "channel_expired" : "channel_closed"},
                    {"channel_id", channel.metadata.channel_id},
                    {"reason", reason}}));
  stage_channel_event(batch, channel.metadata.channel_id,
                      expired ? "expired" : "closed",
                      {{"reason", reason}, {"at", at}});
}

Result<void> Hub::check_send_rules(const AgentRecord& sender,
                                   const Envelope& envelope) const {
  return arbiter_->authorize_send(state_.registry, sender, envelope);
}

Result<void> Hub::check_inboxes(const ChannelEntry& channel,
                                const Envelope& envelope) const {
  std::vector<std::string> recipients;
  if (envelope.audience) {
    recipients = *envelope.audience;
  } else {
    for (const Participant& participant : channel.metadata.participants) {
      recipients.push_back(participant.agent_id);
    }
  }
  std::lock_guard lock(delivery_mutex_);
  for (const auto& id : recipients) {
    if (id == envelope.sender_id) continue;
    const AgentRecord* recipient = state_.registry.find(id);
    if (!recipient) continue;
    auto pending = pending_inbox_.find(id);
    const std::int64_t current =
        pending == pending_inbox_.end() ? 0 : pending->second;
    if (auto room = arbiter_->authorize_inbox(*recipient, envelope, current);
        !room) {
      return room;
    }
  }
  return {};
}

Result<ChannelMetadata> Hub::create_channel(
    const CreateChannelRequest& request) {
  Commit batch;
  std::optional<Error> invite_failure;
  std::string channel_id;
  {
    auto writer = lock_writer();
    const Registry& registry = state_.registry;
    const AgentRecord* creator = registry.find(request.creator_id);
    if (!creator) {
      return not_found("creator not registered: " + request.creator_id);
    }
    if (request.participants.empty()) {
      return protocol_error("channel requires at least one participant");
    }
    std::vector<std::string> ids;
    for (const auto& id : request.participants) {
      if (std::ranges::find(ids, id) != ids.end()) {
        return protocol_error("participant listed twice: " + single_quoted(id));
      }
      if (id != request.creator_id && !registry.find(id)) {
        return not_found("participant not registered: " + id);
      }
      ids.push_back(id);
    }
    if (std::ranges::find(ids, request.creator_id) == ids.end()) {
      ids.insert(ids.begin(), request.creator_id);
    }
    auto adapter =
        adapters_.find(request.manifest_type, request.manifest_version);
    if (!adapter) {
      return not_found("no adapter registered for " +
                       single_quoted(request.manifest_type) + "@v" +
                       std::to_string(request.manifest_version));
    }
    std::vector<const AgentRecord*> invitees;
    for (const auto& id : ids) {
      if (id != request.creator_id) invitees.push_back(registry.find(id));
    }
    const auto open = std::ranges::count_if(
        state_.channels.in_order(), [&](const ChannelEntry* channel) {
          return channel->metadata.creator_id == request.creator_id &&
                 !is_terminal(channel->metadata.state);
        });
    if (auto allowed =
            arbiter_->authorize_channel_open(*creator, invitees, open);
        !allowed) {
      return std::unexpected(allowed.error());
    }
    auto ttl = parse_ttl(
        request.ttl.value_or(creator->rule.limits.channel_ttl_default),
        request.ttl ? "ttl" : "the creator's rule.limits.channel_ttl_default");
    if (!ttl) return std::unexpected(ttl.error());

    const Timestamp created = clock_->now();
    ChannelMetadata metadata;
    metadata.channel_id = new_id();
    metadata.manifest = adapter->manifest();
    metadata.creator_id = request.creator_id;
    metadata.created_at = format_timestamp(created);
    if (*ttl > 0) {
      metadata.expires_at =
          format_timestamp(created + std::chrono::seconds(*ttl));
    }
    for (std::size_t i = 0; i < ids.size(); ++i) {
      std::string role = ids[i] == request.creator_id ? "initiator"
                         : ids.size() == 2            ? "respondent"
                                                      : "participant";
      metadata.participants.push_back({ids[i], std::move(role),
                                       static_cast<std::int64_t>(i),
                                       metadata.created_at});
      if (ids[i] != request.creator_id) metadata.pending_acks.push_back(ids[i]);
    }
    auto labels = parse_object(request.labels);
    if (!labels) return invalid("labels must be a JSON object");
    if (request.intent && !request.intent->empty()) {
      (*labels)["intent"] = *request.intent;
    }
    metadata.labels = labels->dump();
    const auto knobs = parse_object(request.knobs);
    if (!knobs) return invalid("knobs must be a JSON object");
    metadata.knobs = knobs->dump();
    metadata.required_acks = request.required_acks;
    if (auto valid = adapter->validate_create(metadata); !valid) {
      return std::unexpected(valid.error());
    }
    if (auto state = adapter->initial_state(metadata); !state) {
      return std::unexpected(state.error());
    }
    channel_id = metadata.channel_id;

    batch.add(channel_created_record(metadata));
    nlohmann::json participant_ids = ids;
    batch.add(audit_record({{"at", metadata.created_at},
                            {"kind", "channel_created"},
                            {"channel_id", channel_id},
                            {"manifest_type", metadata.manifest.type},
                            {"manifest_version", metadata.manifest.version},
                            {"creator_id", metadata.creator_id},
                            {"participants", participant_ids}}));
    stage_channel_event(
        batch, channel_id, "created",
        {{"participants", participant_ids}, {"at", metadata.created_at}});
    // Invites go through the post path's send rules (spec §4.3 step 14).
    for (const auto& invitee : metadata.pending_acks) {
      Envelope invite =
          hub_envelope(metadata, event_type::kChannelInvite,
                       {{"channel_id", channel_id},
                        {"manifest_type", metadata.manifest.type},
                        {"manifest_version", metadata.manifest.version},
                        {"creator_id", metadata.creator_id},
                        {"knobs", *knobs},
                        {"labels", *labels}},
                       std::vector{invitee});
      if (auto allowed = check_send_rules(*creator, invite); !allowed) {
        invite_failure = allowed.error();
        break;
      }
      batch.add_envelope(std::move(invite), /*hub_authored=*/true,
                         /*deliver=*/true);
      stage_envelope_posted(batch);
    }
    ChannelEntry staged{.metadata = metadata};
    if (invite_failure) {
      stage_terminal(batch, staged, ChannelState::kClosed, "invite_failed");
    } else if (metadata.pending_acks.empty()) {
      stage_channel_event(batch, channel_id, "opened", {});
      batch.add_envelope(
          hub_envelope(metadata, event_type::kChannelOpened,
                       {{"channel_id", channel_id}}, std::nullopt),
          /*hub_authored=*/true, /*deliver=*/true);
      stage_envelope_posted(batch);
    }
    if (auto committed = commit(batch, writer); !committed) {
      return std::unexpected(committed.error());
    }
  }
  publish(batch);
  if (invite_failure) return std::unexpected(*invite_failure);
  return wait_for_handshake(channel_id);
}

Result<ChannelMetadata> Hub::wait_for_handshake(std::string_view channel_id) {
  {
    std::unique_lock lock(state_mutex_);
    ++handshake_waiters_;
    const auto deadline =
        std::chrono::steady_clock::now() + invite_ack_timeout_;
    const ChannelEntry* channel = state_.channels.find(channel_id);
    lifecycle_changed_.wait_until(lock, deadline, [&] {
      return closed_ || channel->metadata.state != ChannelState::kPending;
    });
    --handshake_waiters_;
    lifecycle_changed_.notify_all();
    if (closed_) return fail(ErrorKind::kStorage, "the hub is closed");
    if (channel->metadata.state == ChannelState::kActive) {
      return channel->metadata;
    }
    if (is_terminal(channel->metadata.state)) {
      return protocol_error(
          channel_label(channel_id) +
          " closed during handshake: " + channel->metadata.close_reason);
    }
  }
  auto closed =
      terminate_channel(channel_id, ChannelState::kClosed, "invite_timeout",
                        /*pending_only=*/true);
  if (closed && closed->state == ChannelState::kActive) return closed;
  return protocol_error(channel_label(channel_id) + " ack timeout");
}

Result<ChannelMetadata> Hub::terminate_channel(std::string_view channel_id,
                                               ChannelState state,
                                               std::string_view reason,
                                               bool pending_only) {
  Commit batch;
  {
    auto writer = lock_writer();
    const ChannelEntry* channel = state_.channels.find(channel_id);
    if (!channel) return invalid(single_quoted(channel_id));
    if (is_terminal(channel->metadata.state) ||
        (pending_only && channel->metadata.state != ChannelState::kPending)) {
      return channel->metadata;
    }
    stage_terminal(batch, *channel, state, reason);
    if (auto committed = commit(batch, writer); !committed) {
      return std::unexpected(committed.error());
    }
  }
  publish(batch);
  return get_channel(channel_id);
}

Result<ChannelMetadata> Hub::close_channel(std::string_view channel_id,
                                           std::string_view reason) {
  return terminate_channel(channel_id, ChannelState::kClosed,
                           reason.empty() ? "explicit_close" : reason);
}

Result<void> Hub::expire_due() {
  std::vector<std::string> due;
  {
    std::shared_lock lock(state_mutex_);
    const std::string at = now();
    for (const ChannelEntry* channel : state_.channels.in_order()) {
      const ChannelMetadata& metadata = channel->metadata;
      if (!is_terminal(metadata.state) && metadata.expires_at &&
          *metadata.expires_at <= at) {
        due.push_back(metadata.channel_id);
      }
    }
  }
  for (const auto& channel_id : due) {
    auto expired =
        terminate_channel(channel_id, ChannelState::kExpired, "ttl_expired");
    if (!expired) return std::unexpected(expired.error());
  }
  return expire_due_tasks();
}

Result<std::string> Hub::sequence_post(PostRequest& request) {
  Envelope& envelope = request.envelope;
  Commit& batch = request.batch;
  const std::string sender_id = envelope.sender_id;
  const bool substantive = !event_type::is_protocol(envelope.event_type);
  // 1. sender registered
  const AgentRecord* sender = state_.registry.find(envelope.sender_id);
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
  if (auto allowed = check_send_rules(*sender, envelope); !allowed) {
    return std::unexpected(allowed.error());
  }
  const bool rate_limited =
      !event_type::is_channel_protocol(envelope.event_type);
  if (rate_limited) {
    if (auto allowed = rate_limiter_.check(*sender, clock_->now()); !allowed) {
      return std::unexpected(allowed.error());
    }
  }
  // 3-5. the channel and its state
  const ChannelEntry* channel = state_.channels.find(envelope.channel_id);
  if (!channel) return not_found("channel not found: " + envelope.channel_id);
  const ChannelMetadata& metadata = channel->metadata;
  const std::string label = channel_label(metadata.channel_id);
  if (is_terminal(metadata.state)) {
    return protocol_error(label + " is " +
                          std::string(to_string(metadata.state)));
  }
  if (substantive && metadata.state != ChannelState::kActive) {
    return protocol_error(label + " not active (state=" +
                          std::string(to_string(metadata.state)) + ")");
  }
  // Only participants post (ADR 0021, DESIGN.md).
  if (!metadata.has_participant(envelope.sender_id) &&
      !admits_cancel_request(metadata, envelope)) {
    return protocol_error(label +
                          " only accepts sends from participants, got " +
                          single_quoted(envelope.sender_id));
  }
  // 6. the adapter
  const std::string manifest_label = single_quoted(metadata.manifest.type) +
                                     "@v" +
                                     std::to_string(metadata.manifest.version);
  if (!channel->adapter) {
    return protocol_error(label + " has no registered adapter (manifest " +
                          manifest_label + ")");
  }
  // 7. inbox capacity
  if (substantive) {
    if (auto room = check_inboxes(*channel, envelope); !room) {
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
  envelope.envelope_id = minter_.mint();
  envelope.created_at = now();
  const std::string_view type = envelope.event_type;
  const bool ack = type == event_type::kChannelInviteAck;
  const bool reject = type == event_type::kChannelInviteReject;
  const bool pending = metadata.state == ChannelState::kPending;
  std::optional<AcceptResult> accepted;
  if (!ack && !reject) {
    auto after = channel->state->clone();
    channel->adapter->fold(view_of(envelope), *after);
    accepted =
        channel->adapter->on_accepted(metadata, view_of(envelope), *after);
  }
  const bool activates = ack && pending && metadata.rejected_by.empty() &&
                         metadata.pending_acks.size() == 1 &&
                         metadata.pending_acks.front() == envelope.sender_id;
  const std::string envelope_id = envelope.envelope_id;
  if (rate_limited) rate_limiter_.consume(sender_id);
  batch.add_envelope(std::move(envelope), /*hub_authored=*/false,
                     /*deliver=*/!ack && !reject);
  if (!idempotency_key.empty()) {
    stage_idempotency_key(batch, std::move(idempotency_key));
  }
  if (!ack && !reject) stage_envelope_posted(batch);
  if (activates) {
    stage_channel_event(batch, metadata.channel_id, "opened", {});
    batch.add_envelope(
        hub_envelope(metadata, event_type::kChannelOpened,
                     {{"channel_id", metadata.channel_id}}, std::nullopt),
        /*hub_authored=*/true, /*deliver=*/true);
    stage_envelope_posted(batch);
  } else if (reject && pending) {
    stage_terminal(batch, *channel, ChannelState::kClosed, "invite_rejected");
  } else if (accepted && accepted->next_state &&
             is_terminal(*accepted->next_state)) {
    // A non-terminal next state (no built-in asks for one) is not applied:
    // lifecycle is folded from envelopes, and no envelope marks it.
    stage_terminal(batch, *channel, *accepted->next_state,
                   accepted->auto_close_reason);
  }
  // Refused before sequencing: nothing is folded, nothing will be told.
  auto refused = [&](Error error) {
    if (rate_limited) rate_limiter_.refund(sender_id);
    return std::unexpected(std::move(error));
  };
  if (auto accepting = check_accepting(); !accepting) {
    return refused(accepting.error());
  }
  auto positions = store_->append_deferred(
      batch.entries, [this, &request](log::Result<void> durable) {
        if (!durable) stop_accepting_changes(durable.error());
        request.durable = std::move(durable);
        request.finish();
      });
  if (!positions) return refused(storage_error(positions.error()).error());
  request.sequenced = true;
  if (auto folded = fold_sequenced(batch, *positions); !folded) {
    stop_accepting_changes(folded.error());
    return std::unexpected(folded.error());
  }
  return envelope_id;
}

}  // namespace parley::engine
