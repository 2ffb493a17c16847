#include "engine/hub/periodic_work.h"

#include <exception>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/base/event_types.h"
#include "engine/hub/audit.h"
#include "engine/records/expectation_records.h"
#include "engine/records/log_records.h"

namespace parley::engine {

namespace {

using nlohmann::json;

json object_or_empty(std::string_view text) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_discarded() ? json::object() : parsed;
}

void report(std::string_view channel_id, std::string_view what,
            std::string_view message) {
  std::cerr << "parley: expectation tick, channel " << channel_id << ": "
            << what << ": " << message << '\n';
}

}  // namespace

Result<void> PeriodicWork::expire_due() {
  std::vector<std::string> due;
  {
    log::ReaderLock lock(core_.state_mutex);
    const std::string at = core_.now();
    for (const ChannelEntry* channel : core_.state.channels.in_order()) {
      const ChannelMetadata& metadata = channel->metadata;
      if (!is_terminal(metadata.state) && metadata.expires_at &&
          *metadata.expires_at <= at) {
        due.push_back(metadata.channel_id);
      }
    }
  }
  for (const auto& channel_id : due) {
    auto expired = channels_.terminate_now(channel_id, ChannelState::kExpired,
                                           "ttl_expired");
    if (!expired) return std::unexpected(expired.error());
  }
  return committer_.apply(tasks_.expire_due_tasks());
}

Result<void> PeriodicWork::expire_orphaned_pending() {
  std::vector<std::string> orphans;
  {
    log::ReaderLock lock(core_.state_mutex);
    for (const ChannelEntry* channel : core_.state.channels.in_order()) {
      if (channel->metadata.state == ChannelState::kPending) {
        orphans.push_back(channel->metadata.channel_id);
      }
    }
  }
  for (const auto& channel_id : orphans) {
    auto expired = channels_.terminate_now(channel_id, ChannelState::kExpired,
                                           "hydrate_orphaned_pending");
    if (!expired) return std::unexpected(expired.error());
  }
  return {};
}

Result<std::size_t> PeriodicWork::tick_expectations() {
  if (core_.expectations.inert()) return 0;
  std::vector<std::string> live;
  {
    log::ReaderLock lock(core_.state_mutex);
    for (const ChannelEntry* channel : core_.state.channels.in_order()) {
      if (!is_terminal(channel->metadata.state)) {
        live.push_back(channel->metadata.channel_id);
      }
    }
  }
  std::size_t fired = 0;
  std::optional<Error> first_error;
  for (const auto& channel_id : live) {
    Result<std::size_t> ticked;
    try {
      ticked = tick_channel(channel_id);
    } catch (const std::exception& error) {
      ticked = fail(ErrorKind::kStorage, error.what());
    }
    if (!ticked) {
      report(channel_id, "failed", ticked.error().message);
      if (!first_error) first_error = ticked.error();
      continue;
    }
    fired += *ticked;
  }
  if (first_error) return std::unexpected(*first_error);
  return fired;
}

Result<std::size_t> PeriodicWork::tick_channel(std::string_view channel_id) {
  ChannelMetadata metadata;
  ChannelActivity activity;
  std::shared_ptr<const ChannelAdapter> adapter;
  std::unique_ptr<AdapterState> state;
  std::optional<Timestamp> turn_moved_at;
  {
    log::ReaderLock lock(core_.state_mutex);
    const ChannelEntry* channel = core_.state.channels.find(channel_id);
    if (!channel || is_terminal(channel->metadata.state) ||
        channel->metadata.manifest.expectations.empty()) {
      return 0;
    }
    metadata = channel->metadata;
    activity = channel->activity;
    adapter = channel->adapter;
    if (channel->state) state = channel->state->clone();
    if (auto at = core_.state.expectations.turn_moved_at(channel_id)) {
      turn_moved_at = parse_timestamp(*at);
    }
  }
  const ExpectationContext context{
      .metadata = metadata,
      .activity = activity,
      .adapter = adapter.get(),
      .state = state.get(),
      .read_wal = [this, channel_id] { return reads_.read_wal(channel_id); },
      .now = core_.clock->now(),
      .turn_moved_at = turn_moved_at};
  std::size_t fired = 0;
  const auto& expectations = metadata.manifest.expectations;
  for (std::size_t index = 0; index < expectations.size(); ++index) {
    const ExpectationSpec& expectation = expectations[index];
    auto evaluator = core_.expectations.evaluator(expectation.name);
    if (!evaluator) continue;
    std::optional<Violation> violation;
    try {
      violation = evaluator->evaluate(context, expectation);
    } catch (const std::exception& error) {
      report(channel_id, "evaluator " + expectation.name, error.what());
      continue;
    }
    if (!violation) continue;
    auto handler = core_.expectations.handler(expectation.on_violation);
    if (!handler) continue;
    std::vector<std::string> keys = violation->violators;
    if (keys.empty()) keys.emplace_back();
    for (const auto& violator : keys) {
      bool terminal = false;
      auto new_key = fire_expectation(channel_id, index, *violation, violator,
                                      *handler, terminal);
      if (!new_key) return std::unexpected(new_key.error());
      if (*new_key) ++fired;
      // An auto_close stops this channel's tick after its first new key.
      if (terminal || (*new_key && expectation.on_violation == "auto_close")) {
        return fired;
      }
    }
  }
  return fired;
}

Result<bool> PeriodicWork::fire_expectation(std::string_view channel_id,
                                            std::size_t index,
                                            const Violation& violation,
                                            std::string_view violator,
                                            const ExpectationHandler& handler,
                                            bool& terminal) {
  auto ended = std::make_shared<bool>(false);
  auto fired = committer_.apply(Change<bool>{[&, ended](Commit& batch) REQUIRES(
                                                 core_.writer) -> Result<bool> {
    const ChannelEntry* channel =
        core_.staged_state().channels.find(channel_id);
    if (!channel || is_terminal(channel->metadata.state)) {
      *ended = true;
      return false;
    }
    const auto key = static_cast<std::uint32_t>(index);
    if (core_.staged_state().expectations.has_fired(channel_id, key, violator))
      return false;
    const ChannelMetadata& metadata = channel->metadata;
    const ExpectationSpec& expectation =
        metadata.manifest.expectations.at(index);
    HandlerEffects effects;
    try {
      handler.handle({.metadata = metadata,
                      .index = index,
                      .expectation = expectation,
                      .violation = violation,
                      .violator = violator},
                     effects);
    } catch (const std::exception& error) {
      report(channel_id, "handler " + expectation.on_violation, error.what());
      effects = {};
    }
    const std::string at = core_.now();
    const json params = object_or_empty(expectation.params);
    const json detail = object_or_empty(violation.detail);
    const json violators = violation.violators;
    batch.add(expectation_fired_record(
        {.channel_id = std::string(channel_id),
         .index = key,
         .expectation = expectation.name,
         .on_violation = expectation.on_violation,
         .violator = std::string(violator),
         .at = at,
         .hides_violator = effects.hide_violator && !violator.empty() &&
                           metadata.has_participant(violator)}));
    batch.add(audit_record({{"at", at},
                            {"kind", "expectation_violated"},
                            {"channel_id", channel_id},
                            {"expectation", expectation.name},
                            {"on_violation", expectation.on_violation},
                            {"params", params},
                            {"violators", violators},
                            {"detail", detail}}));
    if (metadata.state == ChannelState::kActive) {
      for (auto& notice : effects.notices) {
        Envelope envelope =
            channels_.hub_envelope(metadata, event_type::kExpectationViolated,
                                   {{"expectation", expectation.name},
                                    {"violators", violators},
                                    {"detail", detail}},
                                   notice.audience);
        envelope.audience = std::move(notice.audience);
        batch.add_envelope(std::move(envelope), /*hub_authored=*/true,
                           /*deliver=*/true);
      }
    }
    if (effects.close_reason) {
      channels_.check_same_writer(core_);
      channels_.stage_terminal(batch, *channel, ChannelState::kClosed,
                               *effects.close_reason);
      *ended = true;
    }
    json fired_expectation{
        {"index", index},
        {"name", expectation.name},
        {"on_violation", expectation.on_violation},
        {"params", params},
        {"applies_to", expectation.applies_to
                           ? object_or_empty(*expectation.applies_to)
                           : json(nullptr)}};
    json fired_violation{
        {"violators", violators}, {"violator", violator}, {"detail", detail}};
    batch.notify([id = std::string(channel_id), fired_expectation,
                  fired_violation](HubListener& listener) {
      listener.on_expectation_fired(id, fired_expectation, fired_violation);
    });
    return true;
  }});
  terminal = *ended;
  return fired;
}

}  // namespace parley::engine
