#include "engine/hub/channel_lifecycle.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/base/ids.h"
#include "engine/base/input_limits.h"
#include "engine/base/python_repr.h"
#include "engine/hub/audit.h"
#include "engine/hub/identities.h"
#include "engine/hub/listener_events.h"
#include "engine/records/log_records.h"
#include "engine/registry/duration.h"

namespace parley::engine {

namespace {

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

// An asynchronous create_channel waiting for its invitees' acks.
struct ChannelLifecycle::Waiter {
  Done<ChannelMetadata> done;
};

Envelope ChannelLifecycle::hub_envelope(
    const ChannelMetadata& metadata, std::string_view type, nlohmann::json data,
    std::optional<std::vector<std::string>> audience) const {
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
  envelope.envelope_id = core_.minter.mint();
  envelope.created_at = core_.now();
  return envelope;
}

void ChannelLifecycle::stage_terminal(Commit& batch,
                                      const ChannelEntry& channel,
                                      ChannelState state,
                                      std::string_view reason) const {
  tasks_.check_same_writer(core_);
  tasks_.stage_cascade(batch, channel.metadata.channel_id);
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
  stage_channel_event(core_, reads_, batch, channel.metadata.channel_id,
                      expired ? "expired" : "closed",
                      {{"reason", reason}, {"at", at}});
}

Change<std::string> ChannelLifecycle::stage_create(
    const CreateChannelRequest& request,
    std::shared_ptr<std::optional<Error>> invite_failure) {
  return {[this, request, invite_failure](Commit& batch) REQUIRES(
              core_.writer) -> Result<std::string> {
    const Registry& registry = core_.staged_state().registry;
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
        core_.adapters.find(request.manifest_type, request.manifest_version);
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
        core_.staged_state().channels.in_order(),
        [&](const ChannelEntry* channel) {
          return channel->metadata.creator_id == request.creator_id &&
                 !is_terminal(channel->metadata.state);
        });
    if (auto allowed =
            core_.arbiter->authorize_channel_open(*creator, invitees, open);
        !allowed) {
      return std::unexpected(allowed.error());
    }
    auto ttl = parse_ttl(
        request.ttl.value_or(creator->rule.limits.channel_ttl_default),
        request.ttl ? "ttl" : "the creator's rule.limits.channel_ttl_default");
    if (!ttl) return std::unexpected(ttl.error());

    const Timestamp created = core_.clock->now();
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
    // Each invite's event_data carries knobs and labels one level down.
    for (const auto& [field, text] : {std::pair{"knobs", &metadata.knobs},
                                      std::pair{"labels", &metadata.labels}}) {
      if (auto storable =
              check_json_text(field, *text, kMaxStoredJsonDepth - 1);
          !storable) {
        return std::unexpected(storable.error());
      }
    }
    metadata.required_acks = request.required_acks;
    if (auto valid = adapter->validate_create(metadata); !valid) {
      return std::unexpected(valid.error());
    }
    if (auto state = adapter->initial_state(metadata); !state) {
      return std::unexpected(state.error());
    }
    const std::string channel_id = metadata.channel_id;

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
        core_, reads_, batch, channel_id, "created",
        {{"participants", participant_ids}, {"at", metadata.created_at}});
    // Invites go through the post path's send rules (e.g. the creator's
    // outbound_to); a refused invite closes the channel "invite_failed".
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
      if (auto allowed =
              core_.arbiter->authorize_send(registry, *creator, invite);
          !allowed) {
        *invite_failure = allowed.error();
        break;
      }
      batch.add_envelope(std::move(invite), /*hub_authored=*/true,
                         /*deliver=*/true);
      stage_envelope_posted(core_, reads_, batch);
    }
    ChannelEntry staged{.metadata = metadata};
    if (*invite_failure) {
      stage_terminal(batch, staged, ChannelState::kClosed, "invite_failed");
    } else if (metadata.pending_acks.empty()) {
      stage_channel_event(core_, reads_, batch, channel_id, "opened", {});
      batch.add_envelope(
          hub_envelope(metadata, event_type::kChannelOpened,
                       {{"channel_id", channel_id}}, std::nullopt),
          /*hub_authored=*/true, /*deliver=*/true);
      stage_envelope_posted(core_, reads_, batch);
    }
    return channel_id;
  }};
}

Result<ChannelMetadata> ChannelLifecycle::create(
    const CreateChannelRequest& request) {
  auto invite_failure = std::make_shared<std::optional<Error>>();
  auto channel_id = committer_.apply(stage_create(request, invite_failure));
  if (!channel_id) return std::unexpected(channel_id.error());
  if (*invite_failure) return std::unexpected(**invite_failure);
  return wait_for_handshake(*channel_id);
}

void ChannelLifecycle::create_async(const CreateChannelRequest& request,
                                    Done<ChannelMetadata> done) {
  auto invite_failure = std::make_shared<std::optional<Error>>();
  Change<std::string> change = stage_create(request, invite_failure);
  // The waiter is registered before the invites are published, so no ack
  // can be folded before it waits.
  change.settle = [this, invite_failure, done](
                      const Commit&, const Result<std::string>& channel_id,
                      bool) {
    if (!channel_id || *invite_failure) return;  // told below
    log::ReaderLock state(core_.state_mutex);
    const ChannelEntry* channel = core_.state.channels.find(*channel_id);
    if (channel && channel->metadata.state != ChannelState::kPending) {
      auto outcome = handshake_outcome(channel->metadata);
      committer_.post([done, outcome] { done(outcome); });
      return;
    }
    {
      log::MutexLock lock(waiters_mutex_);
      waiters_.insert_or_assign(*channel_id,
                                std::make_shared<Waiter>(Waiter{done}));
    }
    committer_.run_after(core_.invite_ack_timeout,
                         [this, id = *channel_id] { handshake_timed_out(id); });
  };
  committer_.submit(std::move(change),
                    [invite_failure, done](Result<std::string> channel_id) {
                      if (!channel_id) {
                        done(std::unexpected(channel_id.error()));
                      } else if (*invite_failure) {
                        done(std::unexpected(**invite_failure));
                      }
                      // Otherwise the waiter tells `done`.
                    });
}

Result<ChannelMetadata> ChannelLifecycle::handshake_outcome(
    const ChannelMetadata& metadata) const {
  if (metadata.state == ChannelState::kActive) return metadata;
  return protocol_error(channel_label(metadata.channel_id) +
                        " closed during handshake: " + metadata.close_reason);
}

void ChannelLifecycle::folded(const Commit& batch) {
  if (blocking_waiters_ > 0) core_.lifecycle_changed.notify_all();
  std::vector<std::pair<std::shared_ptr<Waiter>, Result<ChannelMetadata>>>
      ready;
  {
    log::MutexLock lock(waiters_mutex_);
    if (waiters_.empty()) return;
    // A channel leaves pending only by an envelope on it (channels are
    // never removed), so only the batch's channels can have finished their
    // handshake: a fold costs nothing per handshake still waiting.
    for (const Commit::StagedEnvelope& staged : batch.envelopes) {
      auto it = waiters_.find(staged.envelope->channel_id);
      if (it == waiters_.end()) continue;
      const ChannelEntry* channel = core_.state.channels.find(it->first);
      if (channel && channel->metadata.state == ChannelState::kPending) {
        continue;
      }
      ready.emplace_back(
          it->second, channel ? handshake_outcome(channel->metadata)
                              : not_found("channel not found: " + it->first));
      waiters_.erase(it);
    }
  }
  for (auto& [waiter, outcome] : ready) {
    committer_.post(
        [waiter = waiter, outcome = outcome] { waiter->done(outcome); });
  }
}

void ChannelLifecycle::handshake_timed_out(std::string channel_id) {
  std::shared_ptr<Waiter> waiter;
  {
    log::MutexLock lock(waiters_mutex_);
    auto it = waiters_.find(channel_id);
    if (it == waiters_.end()) return;  // answered meanwhile
    waiter = it->second;
    waiters_.erase(it);
  }
  terminate_async(channel_id, ChannelState::kClosed, "invite_timeout",
                  /*pending_only=*/true,
                  [waiter, channel_id](Result<ChannelMetadata> closed) {
                    if (closed && closed->state == ChannelState::kActive) {
                      waiter->done(std::move(closed));
                    } else {
                      waiter->done(protocol_error(channel_label(channel_id) +
                                                  " ack timeout"));
                    }
                  });
}

Result<ChannelMetadata> ChannelLifecycle::wait_for_handshake(
    std::string_view channel_id) {
  {
    log::WriterLock lock(core_.state_mutex);
    ++blocking_waiters_;
    const auto deadline =
        std::chrono::steady_clock::now() + core_.invite_ack_timeout;
    const ChannelEntry* channel = core_.state.channels.find(channel_id);
    while (!core_.closed && channel->metadata.state == ChannelState::kPending) {
      if (lock.wait_until(core_.lifecycle_changed, deadline) ==
          std::cv_status::timeout) {
        break;
      }
    }
    --blocking_waiters_;
    core_.lifecycle_changed.notify_all();
    if (core_.closed) return fail(ErrorKind::kStorage, "the hub is closed");
    if (channel->metadata.state != ChannelState::kPending) {
      return handshake_outcome(channel->metadata);
    }
  }
  auto closed = terminate_now(channel_id, ChannelState::kClosed,
                              "invite_timeout", /*pending_only=*/true);
  if (closed && closed->state == ChannelState::kActive) return closed;
  return protocol_error(channel_label(channel_id) + " ack timeout");
}

void ChannelLifecycle::close() {
  std::map<std::string, std::shared_ptr<Waiter>, std::less<>> waiting;
  {
    log::MutexLock lock(waiters_mutex_);
    waiting.swap(waiters_);
  }
  for (auto& [id, waiter] : waiting) {
    waiter->done(fail(ErrorKind::kStorage, "the hub is closed"));
  }
  // Release blocking waiters and wait until they are gone: they may still
  // need the writer on their way out.
  log::WriterLock lock(core_.state_mutex);
  core_.lifecycle_changed.notify_all();
  while (blocking_waiters_ != 0) lock.wait(core_.lifecycle_changed);
}

Change<void> ChannelLifecycle::terminate(std::string channel_id,
                                         ChannelState state, std::string reason,
                                         bool pending_only) {
  return {[=, this](Commit& batch) REQUIRES(core_.writer) -> Result<void> {
    const ChannelEntry* channel =
        core_.staged_state().channels.find(channel_id);
    if (!channel) return invalid(single_quoted(channel_id));
    if (is_terminal(channel->metadata.state) ||
        (pending_only && channel->metadata.state != ChannelState::kPending)) {
      return {};
    }
    stage_terminal(batch, *channel, state, reason);
    return {};
  }};
}

Result<ChannelMetadata> ChannelLifecycle::terminate_now(
    std::string_view channel_id, ChannelState state, std::string_view reason,
    bool pending_only) {
  auto ended = committer_.apply(terminate(std::string(channel_id), state,
                                          std::string(reason), pending_only));
  if (!ended) return std::unexpected(ended.error());
  return reads_.get_channel(channel_id);
}

void ChannelLifecycle::terminate_async(std::string channel_id,
                                       ChannelState state, std::string reason,
                                       bool pending_only,
                                       Done<ChannelMetadata> done) {
  committer_.submit(
      terminate(channel_id, state, std::move(reason), pending_only),
      [this, channel_id, done](Result<void> ended) {
        if (!ended) {
          done(std::unexpected(ended.error()));
        } else {
          done(reads_.get_channel(channel_id));
        }
      });
}

}  // namespace parley::engine
