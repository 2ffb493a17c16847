#include "engine/hub/task_mutations.h"

#include <nlohmann/json.hpp>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/base/input_limits.h"
#include "engine/base/utf8.h"
#include "engine/hub/audit.h"
#include "engine/json/task_json.h"
#include "engine/records/log_records.h"
#include "engine/records/task_records.h"
#include "engine/registry/duration.h"

namespace parley::engine {

namespace {

using nlohmann::json;

// A copy of a connection's agents: a change may run after its caller
// returned.
std::optional<std::vector<std::string>> owned(
    std::optional<ConnectionAgents> connection) {
  if (!connection) return std::nullopt;
  return std::vector<std::string>(connection->begin(), connection->end());
}

constexpr std::size_t kMaxCancelReasonChars = 500;

std::unexpected<Error> task_not_found(std::string_view task_id) {
  return not_found("task not found: " + std::string(task_id));
}

// Milliseconds from `started_at` to `completed_at`, when both parse.
std::optional<double> latency_ms(const TaskMetadata& task) {
  if (!task.started_at || !task.completed_at) return std::nullopt;
  auto started = parse_timestamp(*task.started_at);
  auto completed = parse_timestamp(*task.completed_at);
  if (!started || !completed) return std::nullopt;
  return std::chrono::duration<double, std::milli>(*completed - *started)
      .count();
}

// AG2 compares expires_at with the clock as strings; Parley compares times
// when the value parses (a client may write "Z" or another offset).
bool is_due(const std::string& expires_at, Timestamp now,
            const std::string& now_text) {
  if (auto at = parse_timestamp(expires_at)) return *at <= now;
  return expires_at <= now_text;
}

// In-process callers hand JSON over as text: refuse what is not JSON of
// the kind the field needs rather than fail later.
Result<void> check_json(std::string_view field, const JsonText& text,
                        bool object) {
  if (auto checked =
          check_json_text("task field '" + std::string(field) + "'", text);
      !checked) {
    return checked;
  }
  const json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || (object && !parsed.is_object())) {
    return invalid("task field '" + std::string(field) + "' must be " +
                   (object ? "a JSON object" : "JSON"));
  }
  return {};
}

Result<void> check_task_json(const TaskMetadata& task) {
  if (auto ok = check_json("spec.payload", task.spec.payload, true); !ok) {
    return ok;
  }
  if (auto ok = check_json("progress", task.progress, true); !ok) return ok;
  return check_json("result", task.result, false);
}

}  // namespace

Change<void> TaskMutations::observe_task(
    TaskMetadata metadata, std::optional<ConnectionAgents> connection) {
  if (!is_valid_task_id(metadata.task_id)) {
    return refused<void>(invalid_task_id(metadata.task_id).error());
  }
  if (!is_task_state(metadata.state)) {
    return refused<void>(
        {ErrorKind::kInvalid, invalid_task_state_message(metadata.state)});
  }
  if (auto ok = check_task_json(metadata); !ok)
    return refused<void>(ok.error());
  return {[this, metadata = std::move(metadata),
           connection = owned(connection)](
              Commit& batch) REQUIRES(core_.writer) mutable -> Result<void> {
    if (connection) {
      if (auto allowed = engine::check_task_access(
              core_.staged_state().tasks, metadata.task_id,
              ConnectionAgents(*connection));
          !allowed) {
        return allowed;
      }
    }
    const TaskEntry* known = core_.staged_state().tasks.find(metadata.task_id);
    const AgentRecord* owner = core_.staged_state().registry.find(
        known ? known->metadata.owner_id : metadata.owner_id);
    if (!known && !owner) {
      return not_found("agent not registered: " + metadata.owner_id);
    }
    if (metadata.channel_id && !metadata.channel_id->empty()) {
      const ChannelEntry* channel =
          core_.staged_state().channels.find(*metadata.channel_id);
      if (!channel) {
        return not_found("channel not found: " + *metadata.channel_id);
      }
      const std::string& owner_id =
          known ? known->metadata.owner_id : metadata.owner_id;
      if (!channel->metadata.has_participant(owner_id)) {
        return access_denied("task owner is not a participant of channel '" +
                             *metadata.channel_id + "'");
      }
    }
    TaskMetadata task;
    if (known) {
      task = known->metadata;
      task.state = std::move(metadata.state);
      auto given = [](const std::optional<std::string>& value) {
        return value && !value->empty();
      };
      if (given(metadata.started_at)) task.started_at = metadata.started_at;
      if (given(metadata.expires_at)) task.expires_at = metadata.expires_at;
      if (given(metadata.channel_id)) task.channel_id = metadata.channel_id;
      json progress = json::parse(task.progress);
      progress.update(json::parse(metadata.progress));
      task.progress = progress.dump();
    } else {
      if (const std::int64_t max = owner->rule.limits.max_concurrent_tasks;
          max > 0) {
        const auto live = static_cast<std::int64_t>(
            core_.staged_state().tasks.live_owned_by(metadata.owner_id));
        if (live >= max) {
          return access_denied("owner '" + metadata.owner_id +
                               "' exceeded max_concurrent_tasks (" +
                               std::to_string(live) +
                               " >= " + std::to_string(max) + ")");
        }
      }
      task = std::move(metadata);
      if (task.channel_id && task.channel_id->empty()) task.channel_id.reset();
      if (task.created_at.empty()) task.created_at = core_.now();
      if (!task.expires_at || task.expires_at->empty()) {
        task.expires_at.reset();
        auto ttl = parse_ttl(owner->rule.limits.task_ttl_default,
                             "the owner's rule.limits.task_ttl_default");
        if (!ttl) return std::unexpected(ttl.error());
        if (*ttl > 0) {
          task.expires_at =
              format_timestamp(core_.clock->now() + std::chrono::seconds(*ttl));
        }
      }
    }
    auto record = task_updated_record(task);
    if (!record) return std::unexpected(record.error());
    batch.add(std::move(*record));
    return {};
  }};
}

Change<void> TaskMutations::update_task(
    std::string task_id, TaskUpdate update,
    std::optional<ConnectionAgents> connection) {
  if (update.state && !is_task_state(*update.state)) {
    return refused<void>(
        {ErrorKind::kInvalid, invalid_task_state_message(*update.state)});
  }
  if (update.progress) {
    if (auto ok = check_json("progress", *update.progress, true); !ok) {
      return refused<void>(ok.error());
    }
  }
  if (update.result) {
    if (auto ok = check_json("result", *update.result, false); !ok) {
      return refused<void>(ok.error());
    }
  }
  return {[this, task_id = std::move(task_id), update = std::move(update),
           connection = owned(connection)](
              Commit& batch) REQUIRES(core_.writer) -> Result<void> {
    if (connection) {
      if (auto allowed =
              engine::check_task_access(core_.staged_state().tasks, task_id,
                                        ConnectionAgents(*connection));
          !allowed) {
        return allowed;
      }
    }
    const TaskEntry* known = core_.staged_state().tasks.find(task_id);
    if (!known) return task_not_found(task_id);
    if (known->metadata.terminal()) return {};  // terminal is final
    TaskMetadata task = known->metadata;
    const std::string at = core_.now();
    if (update.progress) {
      json progress = json::parse(task.progress);
      progress.update(json::parse(*update.progress));
      task.progress = progress.dump();
      task.last_progress_at = at;
    }
    if (update.result) task.result = *update.result;
    if (update.error && !update.error->empty()) task.error = *update.error;
    if (update.state) task.state = *update.state;
    if (task.terminal()) task.completed_at = at;
    // Checked here so stage_terminal may assume the record builds.
    auto record = task_updated_record(task);
    if (!record) return std::unexpected(record.error());
    if (task.terminal()) {
      std::map<std::string, Resume, std::less<>> resumes;
      stage_terminal(batch, task, task.error, resumes);
    } else {
      batch.add(std::move(*record));
    }
    return {};
  }};
}

Change<void> TaskMutations::checkpoint_task(
    std::string task_id, JsonText state,
    std::optional<ConnectionAgents> connection) {
  if (!is_valid_task_id(task_id)) {
    return refused<void>(invalid_task_id(task_id).error());
  }
  if (auto checked = check_json_text("checkpoint state", state); !checked) {
    return refused<void>(checked.error());
  }
  auto parsed = json::parse(state, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    return refused<void>(
        {ErrorKind::kInvalid, "a checkpoint must be a JSON object"});
  }
  return {[this, task_id = std::move(task_id), parsed = std::move(parsed),
           connection = owned(connection)](
              Commit& batch) REQUIRES(core_.writer) -> Result<void> {
    if (connection) {
      if (auto allowed =
              engine::check_task_access(core_.staged_state().tasks, task_id,
                                        ConnectionAgents(*connection));
          !allowed) {
        return allowed;
      }
    }
    const TaskEntry* task = core_.staged_state().tasks.find(task_id);
    if (task && task->metadata.terminal()) {
      return {};  // the task is over; its last checkpoint stands
    }
    auto record = task_checkpointed_record(task_id, parsed.dump());
    if (!record) return std::unexpected(record.error());
    // The first wire write of an unobserved task's checkpoint claims it.
    if (connection && !task &&
        !core_.staged_state().tasks.checkpoint_writers(task_id)) {
      batch.add(checkpoint_writers_claimed_record(task_id, *connection));
    }
    batch.add(std::move(*record));
    return {};
  }};
}

Change<void> TaskMutations::expire_due_tasks() {
  return {[this](Commit& batch) REQUIRES(core_.writer) -> Result<void> {
    const Timestamp now_time = core_.clock->now();
    const std::string at = format_timestamp(now_time);
    std::map<std::string, Resume, std::less<>> resumes;
    for (const TaskEntry* entry : core_.staged_state().tasks.in_order()) {
      const TaskMetadata& live = entry->metadata;
      if (live.terminal() || !live.expires_at ||
          !is_due(*live.expires_at, now_time, at)) {
        continue;
      }
      TaskMetadata task = live;
      task.state = std::string(task_state::kExpired);
      task.completed_at = at;
      task.error = std::string(kTaskTtlExpired);
      stage_terminal(batch, task, kTaskTtlExpired, resumes);
    }
    return {};
  }};
}

void TaskMutations::stage_terminal(
    Commit& batch, const TaskMetadata& task, std::string_view reason,
    std::map<std::string, Resume, std::less<>>& resumes) const {
  // The task's own record cannot fail here: its JSON was stored before.
  batch.add(task_updated_record(task).value());
  const std::string at = task.completed_at.value_or(core_.now());
  const json capability =
      task.spec.capability ? json(*task.spec.capability) : json(nullptr);
  const json channel_id =
      task.channel_id ? json(*task.channel_id) : json(nullptr);
  batch.add(audit_record({{"at", at},
                          {"kind", "task_terminated"},
                          {"task_id", task.task_id},
                          {"owner_id", task.owner_id},
                          {"channel_id", channel_id},
                          {"outcome", task.state},
                          {"capability", capability},
                          {"reason", reason}}));
  json payload = {{"owner_id", task.owner_id}, {"channel_id", channel_id},
                  {"reason", reason},          {"capability", capability},
                  {"outcome", task.state},     {"at", at}};
  batch.notify([id = task.task_id, kind = task.state,
                payload = std::move(payload)](HubListener& listener) {
    listener.on_task_event(id, kind, payload);
  });
  if (!task.spec.capability) return;
  const AgentRecord* owner = core_.staged_state().registry.find(task.owner_id);
  if (!owner || owner->observed_tasks.contains(task.task_id)) return;
  auto resume = resumes.find(task.owner_id);
  if (resume == resumes.end()) {
    resume = resumes.emplace(task.owner_id, owner->resume).first;
  }
  identities_.stage_observation(batch, task.owner_id, resume->second,
                                *task.spec.capability, task.state,
                                latency_ms(task), task.task_id);
}

void TaskMutations::stage_cascade(Commit& batch,
                                  std::string_view channel_id) const {
  std::map<std::string, Resume, std::less<>> resumes;
  const std::string at = core_.now();
  for (const TaskEntry* entry :
       core_.staged_state().tasks.live_in_channel(channel_id)) {
    TaskMetadata task = entry->metadata;
    task.state = std::string(task_state::kExpired);
    task.completed_at = at;
    task.error = std::string(kTaskChannelClosed);
    stage_terminal(batch, task, kTaskChannelClosed, resumes);
  }
}

bool TaskMutations::admits_cancel_request(const ChannelMetadata& channel,
                                          const Envelope& envelope) const {
  if (envelope.event_type != event_type::kTaskCancelRequest ||
      channel.state != ChannelState::kActive || !envelope.task_id) {
    return false;
  }
  const TaskEntry* entry = core_.staged_state().tasks.find(*envelope.task_id);
  if (!entry || entry->metadata.terminal() ||
      entry->metadata.channel_id != channel.channel_id ||
      entry->cancel_requesters.contains(envelope.sender_id)) {
    return false;
  }
  if (!envelope.audience ||
      *envelope.audience != std::vector{entry->metadata.owner_id}) {
    return false;
  }
  const json data = flex_to_json(envelope.event_data);
  if (!data.is_object() || data.size() != 2 || !data.contains("task_id") ||
      !data.contains("reason") || data["task_id"] != *envelope.task_id ||
      !data["reason"].is_string()) {
    return false;
  }
  return decode_utf8(data["reason"].get<std::string>()).size() <=
         kMaxCancelReasonChars;
}

}  // namespace parley::engine
