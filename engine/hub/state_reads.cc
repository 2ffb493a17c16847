#include "engine/hub/state_reads.h"

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>
#include <shared_mutex>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/hub/commit.h"
#include "engine/records/log_records.h"
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

std::unexpected<Error> task_not_found(std::string_view task_id) {
  return not_found("task not found: " + std::string(task_id));
}

}  // namespace

Result<Passport> StateReads::get_agent(std::string_view name_or_id) const {
  log::ReaderLock lock(core_.state_mutex);
  const AgentRecord* agent = core_.state.registry.resolve(name_or_id);
  if (!agent) return not_found("agent not found: " + std::string(name_or_id));
  return agent->passport;
}

std::optional<std::string> StateReads::find_agent_id(
    std::string_view name) const {
  log::ReaderLock lock(core_.state_mutex);
  return core_.state.registry.find_agent_id(name);
}

std::string StateReads::name_for(
    std::string_view agent_id, std::optional<std::string_view> fallback) const {
  log::ReaderLock lock(core_.state_mutex);
  return core_.state.registry.name_for(agent_id, fallback);
}

Result<Resume> StateReads::get_resume(std::string_view agent_id) const {
  log::ReaderLock lock(core_.state_mutex);
  const AgentRecord* agent = core_.state.registry.find(agent_id);
  if (!agent) return not_found("resume not found: " + std::string(agent_id));
  return agent->resume;
}

Result<Rule> StateReads::get_rule(std::string_view agent_id) const {
  log::ReaderLock lock(core_.state_mutex);
  const AgentRecord* agent = core_.state.registry.find(agent_id);
  if (!agent) return not_found("rule not found: " + std::string(agent_id));
  return agent->rule;
}

std::optional<std::string> StateReads::get_skill(
    std::string_view agent_id) const {
  log::ReaderLock lock(core_.state_mutex);
  const AgentRecord* agent = core_.state.registry.find(agent_id);
  return agent ? agent->skill_md : std::nullopt;
}

std::vector<Passport> StateReads::list_agents(const AgentFilter& filter) const {
  log::ReaderLock lock(core_.state_mutex);
  std::vector<Passport> out;
  for (const AgentRecord* agent : core_.state.registry.list(filter)) {
    out.push_back(agent->passport);
  }
  return out;
}

std::vector<std::string> StateReads::agent_owners(
    std::string_view agent_id) const {
  log::ReaderLock lock(core_.state_mutex);
  const AgentRecord* agent = core_.state.registry.find(agent_id);
  return agent ? agent->owners : std::vector<std::string>{};
}

std::vector<std::string> StateReads::agents_with_capability(
    std::string_view capability) const {
  log::ReaderLock lock(core_.state_mutex);
  return core_.state.registry.agents_with_capability(capability);
}

Result<ChannelMetadata> StateReads::get_channel(
    std::string_view channel_id) const {
  log::ReaderLock lock(core_.state_mutex);
  const ChannelEntry* channel = core_.state.channels.find(channel_id);
  if (!channel)
    return not_found("channel not found: " + std::string(channel_id));
  return channel->metadata;
}

std::vector<ChannelMetadata> StateReads::list_channels(
    std::optional<std::string_view> agent_id, std::optional<ChannelState> state,
    std::size_t limit) const {
  log::ReaderLock lock(core_.state_mutex);
  std::vector<ChannelMetadata> out;
  for (const ChannelEntry* channel : core_.state.channels.in_order()) {
    if (out.size() >= limit) break;
    if (state && channel->metadata.state != *state) continue;
    if (agent_id && !channel->metadata.has_participant(*agent_id)) continue;
    out.push_back(channel->metadata);
  }
  return out;
}

Result<std::vector<Envelope>> StateReads::read_wal(
    std::string_view channel_id, std::int64_t since,
    std::optional<std::int64_t> until) const {
  std::uint64_t size = 0;
  {
    log::ReaderLock lock(core_.state_mutex);
    const ChannelEntry* channel = core_.state.channels.find(channel_id);
    if (!channel) return std::vector<Envelope>{};
    size = channel->last_sequence;
  }
  const auto slice = python_slice(since, until, size);
  const std::uint64_t begin = slice.first;
  const std::uint64_t end = slice.second;  // clang 14 captures no bindings
  std::vector<Envelope> out;
  if (begin >= end) return out;
  std::uint64_t next = begin + 1;  // the first channel sequence not yet read
  auto read_from_next = [&] {
    return core_.store->read_channel(
        channel_id, next, end,
        [&](std::uint64_t sequence, std::uint64_t, std::string_view record) {
          if (auto envelope = decode_envelope(record)) {
            out.push_back(std::move(*envelope));
          }
          next = sequence + 1;
          return true;
        });
  };
  if (auto read = read_from_next(); !read) return storage_error(read.error());
  if (next <= end) {
    // The state folds a batch once it is sequenced, before the group commit
    // that writes it: the records it counts are readable once the batches
    // sequenced so far are made durable. A write that fails loses its
    // records (never acked; the hub stops accepting changes): the read
    // returns what the log holds.
    (void)core_.store->flush();
    if (auto read = read_from_next(); !read) {
      return storage_error(read.error());
    }
  }
  return out;
}

Result<std::optional<Envelope>> StateReads::find_envelope_by_causation(
    std::string_view channel_id, std::string_view sender_id,
    std::string_view causation_id) const {
  std::uint64_t sequence = 0;
  {
    log::ReaderLock lock(core_.state_mutex);
    const ChannelEntry* channel = core_.state.channels.find(channel_id);
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

bool StateReads::can_send(std::string_view channel_id,
                          std::string_view sender_id,
                          std::optional<std::string_view> type) const {
  log::ReaderLock lock(core_.state_mutex);
  const ChannelEntry* channel = core_.state.channels.find(channel_id);
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

Result<std::optional<JsonText>> StateReads::adapter_state(
    std::string_view channel_id) const {
  log::ReaderLock lock(core_.state_mutex);
  const ChannelEntry* channel = core_.state.channels.find(channel_id);
  if (!channel)
    return not_found("channel not found: " + std::string(channel_id));
  if (!channel->state) return std::optional<JsonText>{};
  return std::optional<JsonText>(channel->state->to_json());
}

std::vector<PendingTurn> StateReads::pending_turns_for(
    std::string_view agent_id) const {
  std::vector<PendingTurn> turns;
  {
    log::ReaderLock lock(core_.state_mutex);
    if (!core_.state.registry.find(agent_id)) return turns;
    for (const ChannelEntry* channel : core_.state.channels.in_order()) {
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
    if (turn.expected_at.empty()) turn.expected_at = core_.now();
  }
  return turns;
}

Result<std::vector<JsonText>> StateReads::read_audit() const {
  std::vector<JsonText> out;
  auto read = core_.store->read(
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

std::string StateReads::inbox_cursor(std::string_view agent_id,
                                     std::string_view channel_id) const {
  log::ReaderLock lock(core_.state_mutex);
  const AgentRecord* agent = core_.state.registry.find(agent_id);
  if (!agent) return "";
  auto cursor = agent->cursors.find(channel_id);
  return cursor == agent->cursors.end() ? "" : cursor->second;
}

Result<std::vector<Envelope>> StateReads::replay_for(
    std::string_view agent_id, std::string_view since_envelope_id) const {
  std::vector<std::pair<std::string, std::string>> channels;  // id, floor
  {
    log::ReaderLock lock(core_.state_mutex);
    const AgentRecord* agent = core_.state.registry.find(agent_id);
    if (!agent) return std::vector<Envelope>{};
    for (const ChannelEntry* channel : core_.state.channels.in_order()) {
      const ChannelMetadata& metadata = channel->metadata;
      if (is_terminal(metadata.state) || !metadata.has_participant(agent_id)) {
        continue;
      }
      auto cursor = agent->cursors.find(metadata.channel_id);
      std::string floor(since_envelope_id);
      if (cursor != agent->cursors.end()) {
        floor = std::max(floor, cursor->second);
      }
      channels.emplace_back(metadata.channel_id, std::move(floor));
    }
  }
  std::vector<Envelope> out;
  for (const auto& [channel_id, floor] : channels) {
    auto wal = read_wal(channel_id);
    if (!wal) return std::unexpected(wal.error());
    for (Envelope& envelope : *wal) {
      const bool addressed = !envelope.audience ||
                             std::ranges::find(*envelope.audience, agent_id) !=
                                 envelope.audience->end();
      if (!envelope.envelope_id.empty() && envelope.envelope_id > floor &&
          envelope.sender_id != agent_id && addressed) {
        out.push_back(std::move(envelope));
      }
    }
  }
  return out;
}

Result<TaskMetadata> StateReads::get_task(std::string_view task_id) const {
  log::ReaderLock lock(core_.state_mutex);
  const TaskEntry* task = core_.state.tasks.find(task_id);
  if (!task) return task_not_found(task_id);
  return task->metadata;
}

std::vector<TaskMetadata> StateReads::list_tasks(
    const TaskFilter& filter) const {
  log::ReaderLock lock(core_.state_mutex);
  std::vector<TaskMetadata> out;
  for (const TaskEntry* entry : core_.state.tasks.in_order()) {
    if (out.size() >= filter.limit) break;
    const TaskMetadata& task = entry->metadata;
    if (filter.owner_id && task.owner_id != *filter.owner_id) continue;
    if (filter.channel_id && task.channel_id != *filter.channel_id) continue;
    if (filter.state && task.state != *filter.state) continue;
    out.push_back(task);
  }
  return out;
}

Result<std::optional<JsonText>> StateReads::read_task_checkpoint(
    std::string_view task_id,
    std::optional<ConnectionAgents> connection) const {
  log::ReaderLock lock(core_.state_mutex);
  if (connection) {
    if (auto allowed =
            engine::check_task_access(core_.state.tasks, task_id, *connection);
        !allowed) {
      return std::unexpected(allowed.error());
    }
  }
  return core_.state.tasks.checkpoint(task_id);
}

Result<void> StateReads::check_task_access(std::string_view task_id,
                                           ConnectionAgents connection) const {
  log::ReaderLock lock(core_.state_mutex);
  return engine::check_task_access(core_.state.tasks, task_id, connection);
}

std::optional<std::vector<std::string>> StateReads::checkpoint_writers(
    std::string_view task_id) const {
  log::ReaderLock lock(core_.state_mutex);
  const std::vector<std::string>* writers =
      core_.state.tasks.checkpoint_writers(task_id);
  if (!writers) return std::nullopt;
  return *writers;
}

}  // namespace parley::engine
