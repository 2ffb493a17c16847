#include "engine/state/hub_state.h"

#include "engine/base/event_types.h"
#include "engine/records/payloads.h"
#include "engine/records/task_records.h"
#include "parley/schemas/log_generated.h"

namespace parley::engine {

namespace {

std::unexpected<Error> undecodable(std::uint64_t log_sequence,
                                   std::string_view what,
                                   std::string_view detail) {
  return fail(ErrorKind::kStorage,
              "corruption: log record " + std::to_string(log_sequence) +
                  " holds an unreadable " + std::string(what) + ": " +
                  std::string(detail));
}

std::span<const std::uint8_t> bytes(
    const flatbuffers::Vector<std::uint8_t>* vector) {
  if (!vector) return {};
  return {vector->data(), vector->size()};
}

std::string_view view(const flatbuffers::String* text) {
  return text ? std::string_view(text->data(), text->size())
              : std::string_view();
}

// event_data.reason of a closed/expired envelope.
std::string_view reason_of(std::span<const std::uint8_t> data) {
  if (data.empty()) return {};
  auto reason =
      flexbuffers::GetRoot(data.data(), data.size()).AsMap()["reason"];
  if (!reason.IsString()) return {};
  auto text = reason.AsString();
  return {text.c_str(), text.size()};
}

}  // namespace

Result<void> HubState::apply_channel_created(
    std::uint64_t log_sequence, std::span<const std::uint8_t> metadata_flex) {
  auto metadata = decode_channel_metadata(metadata_flex);
  if (!metadata) {
    return undecodable(log_sequence, "channel", metadata.error().message);
  }
  ChannelEntry entry{.metadata = std::move(*metadata)};
  entry.adapter = adapters_.find(entry.metadata.manifest.type,
                                 entry.metadata.manifest.version);
  if (entry.adapter) {
    auto state = entry.adapter->initial_state(entry.metadata);
    if (state) {
      entry.state = std::move(*state);
    } else {
      entry.adapter = nullptr;  // dormant: the adapter refuses this channel
    }
  }
  channels.add(std::move(entry));
  return {};
}

// Schema 1's AgentUpdated: `value` holds the resume or rule map, the
// SKILL.md string (null when removed), or {"resume": map, "task_id":
// string or null} for an observation.
Result<void> HubState::apply_legacy_agent_update(
    std::uint64_t log_sequence, const schema::AgentUpdated& updated) {
  const std::string_view agent_id = view(updated.agent_id());
  const std::string_view what = view(updated.what());
  const auto value = bytes(updated.value());
  const flexbuffers::Reference root =
      value.empty() ? flexbuffers::Reference()
                    : flexbuffers::GetRoot(value.data(), value.size());
  if (what == "skill") {
    registry.set_skill(agent_id, root.IsString() ? std::optional<std::string>(
                                                       root.AsString().str())
                                                 : std::nullopt);
    return {};
  }
  if (what == "rule") {
    auto rule = decode_rule(value);
    if (!rule) return undecodable(log_sequence, "rule", rule.error().message);
    registry.set_rule(agent_id, std::move(*rule));
    return {};
  }
  if (what == "resume") {
    auto resume = decode_resume(value);
    if (!resume) {
      return undecodable(log_sequence, "resume", resume.error().message);
    }
    registry.set_resume(agent_id, std::move(*resume));
    return {};
  }
  if (what != "observation" || !root.IsMap()) {
    return undecodable(log_sequence, "agent update", what);
  }
  const flexbuffers::Map observation = root.AsMap();
  auto resume = decode_resume(observation["resume"]);
  if (!resume) {
    return undecodable(log_sequence, "resume", resume.error().message);
  }
  registry.set_resume(agent_id, std::move(*resume));
  if (const auto task_id = observation["task_id"]; task_id.IsString()) {
    registry.remember_observed_task(agent_id, task_id.AsString().str());
  }
  return {};
}

void HubState::reset() {
  registry = Registry();
  channels = ChannelTable();
  tasks = TaskTable();
  largest_envelope_id.clear();
  expectations = ExpectationLedger();
}

Result<void> HubState::apply(std::uint64_t log_sequence,
                             std::string_view record) {
  const schema::Record* root = schema::GetRecord(record.data());
  switch (root->body_type()) {
    case schema::Body::Envelope: {
      const schema::Envelope* envelope = root->body_as_Envelope();
      ChannelEntry* channel = channels.find(view(envelope->channel_id()));
      const std::string_view id = view(envelope->envelope_id());
      if (id > largest_envelope_id) largest_envelope_id.assign(id);
      if (!channel)
        return {};  // no ChannelCreated record: nothing to fold into
      const auto data = bytes(envelope->event_data());
      const std::string_view type = view(envelope->event_type());
      LoggedEnvelope logged{
          .view = {view(envelope->sender_id()), type, id, data},
          .created_at = view(envelope->created_at()),
          .hub_authored = envelope->hub_authored(),
          .sequence = root->channel_sequence(),
      };
      if (envelope->causation_id()) {
        logged.causation_id = view(envelope->causation_id());
      }
      if (const auto* audience = envelope->audience()) {
        audience_.clear();
        for (const auto* member : *audience) audience_.push_back(view(member));
        logged.audience = audience_;
      }
      if (type == event_type::kChannelClosed ||
          type == event_type::kChannelExpired) {
        logged.close_reason = reason_of(data);
      }
      ChannelTable::apply_envelope(*channel, logged);
      if (type == event_type::kTaskCancelRequest && envelope->task_id()) {
        tasks.note_cancel_request(view(envelope->task_id()),
                                  logged.view.sender_id);
      }
      return {};
    }
    case schema::Body::ChannelCreated:
      return apply_channel_created(
          log_sequence, bytes(root->body_as_ChannelCreated()->metadata()));
    case schema::Body::AgentRegistered: {
      const auto* registered = root->body_as_AgentRegistered();
      auto passport = decode_passport(bytes(registered->passport()));
      auto resume = decode_resume(bytes(registered->resume()));
      auto rule = decode_rule(bytes(registered->rule()));
      if (!passport || !resume || !rule) {
        return undecodable(log_sequence, "agent",
                           !passport ? passport.error().message
                           : !resume ? resume.error().message
                                     : rule.error().message);
      }
      AgentRecord agent{.passport = std::move(*passport),
                        .resume = std::move(*resume),
                        .rule = std::move(*rule)};
      agent.passport.agent_id = view(registered->agent_id());
      if (registered->skill_md())
        agent.skill_md = registered->skill_md()->str();
      if (registered->owners()) {
        for (const auto* owner : *registered->owners()) {
          agent.owners.push_back(owner->str());
        }
      }
      registry.add(std::move(agent));
      return {};
    }
    case schema::Body::AgentUnregistered:
      registry.remove(view(root->body_as_AgentUnregistered()->agent_id()));
      return {};
    case schema::Body::ResumeSet: {
      const auto* set = root->body_as_ResumeSet();
      auto resume = decode_resume(bytes(set->resume()));
      if (!resume) {
        return undecodable(log_sequence, "resume", resume.error().message);
      }
      registry.set_resume(view(set->agent_id()), std::move(*resume));
      return {};
    }
    case schema::Body::RuleSet: {
      const auto* set = root->body_as_RuleSet();
      auto rule = decode_rule(bytes(set->rule()));
      if (!rule) return undecodable(log_sequence, "rule", rule.error().message);
      registry.set_rule(view(set->agent_id()), std::move(*rule));
      return {};
    }
    case schema::Body::SkillSet: {
      const auto* set = root->body_as_SkillSet();
      registry.set_skill(
          view(set->agent_id()),
          set->skill_md() ? std::optional<std::string>(set->skill_md()->str())
                          : std::nullopt);
      return {};
    }
    case schema::Body::ObservationRecorded: {
      const auto* observed = root->body_as_ObservationRecorded();
      auto resume = decode_resume(bytes(observed->resume()));
      if (!resume) {
        return undecodable(log_sequence, "resume", resume.error().message);
      }
      const std::string_view agent_id = view(observed->agent_id());
      registry.set_resume(agent_id, std::move(*resume));
      if (observed->task_id()) {
        registry.remember_observed_task(agent_id, observed->task_id()->str());
      }
      return {};
    }
    case schema::Body::AgentUpdated:
      return apply_legacy_agent_update(log_sequence,
                                       *root->body_as_AgentUpdated());
    case schema::Body::CursorAdvanced: {
      const auto* cursor = root->body_as_CursorAdvanced();
      registry.set_cursor(view(cursor->agent_id()), view(cursor->channel_id()),
                          cursor->envelope_id()->str());
      return {};
    }
    case schema::Body::TaskUpdated:
    case schema::Body::TaskCheckpointed:
    case schema::Body::CheckpointWritersClaimed:
      return apply_task_record(tasks, log_sequence, record);
    case schema::Body::ExpectationFired: {
      const auto* fired = root->body_as_ExpectationFired();
      const std::string_view channel_id = view(fired->channel_id());
      const std::string_view violator = view(fired->violator_id());
      expectations.record(channel_id, fired->expectation_index(), violator,
                          view(fired->at()), fired->hides_violator());
      ChannelEntry* channel = channels.find(channel_id);
      if (fired->hides_violator() && channel && channel->state) {
        channel->adapter->hide(violator, *channel->state);
      }
      return {};
    }
    default:
      // Audit records fold into nothing (read_audit reads them back from
      // the log); liveness records are folded by later modules.
      return {};
  }
}

}  // namespace parley::engine
