// Task mutations and reads (spec §8, §7.8, §4.4 step 2, ADR 0021 §2.5):
// validate against the folded TaskTable, then commit TaskUpdated /
// TaskCheckpointed records (with their audit records and observations) as
// one batch.
#include <nlohmann/json.hpp>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/base/input_limits.h"
#include "engine/base/utf8.h"
#include "engine/hub/hub.h"
#include "engine/hub/hub_commit.h"
#include "engine/json/task_json.h"
#include "engine/records/log_records.h"
#include "engine/records/task_records.h"
#include "engine/registry/duration.h"

namespace parley::engine {

namespace {

using nlohmann::json;

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

Result<void> Hub::observe_task(TaskMetadata metadata,
                               std::optional<ConnectionAgents> connection) {
  if (!is_valid_task_id(metadata.task_id)) {
    return invalid_task_id(metadata.task_id);
  }
  if (!is_task_state(metadata.state)) {
    return invalid(invalid_task_state_message(metadata.state));
  }
  if (auto ok = check_task_json(metadata); !ok) return ok;
  auto writer = lock_writer();
  if (connection) {
    if (auto allowed = engine::check_task_access(state_.tasks, metadata.task_id,
                                                 *connection);
        !allowed) {
      return allowed;
    }
  }
  const TaskEntry* known = state_.tasks.find(metadata.task_id);
  const AgentRecord* owner = state_.registry.find(
      known ? known->metadata.owner_id : metadata.owner_id);
  if (!known && !owner) {
    return not_found("agent not registered: " + metadata.owner_id);
  }
  if (metadata.channel_id && !metadata.channel_id->empty()) {
    const ChannelEntry* channel = state_.channels.find(*metadata.channel_id);
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
          state_.tasks.live_owned_by(metadata.owner_id));
      if (live >= max) {
        return access_denied("owner '" + metadata.owner_id +
                             "' exceeded max_concurrent_tasks (" +
                             std::to_string(live) +
                             " >= " + std::to_string(max) + ")");
      }
    }
    task = std::move(metadata);
    if (task.channel_id && task.channel_id->empty()) task.channel_id.reset();
    if (task.created_at.empty()) task.created_at = now();
    if (!task.expires_at || task.expires_at->empty()) {
      task.expires_at.reset();
      auto ttl = parse_ttl(owner->rule.limits.task_ttl_default,
                           "the owner's rule.limits.task_ttl_default");
      if (!ttl) return std::unexpected(ttl.error());
      if (*ttl > 0) {
        task.expires_at =
            format_timestamp(clock_->now() + std::chrono::seconds(*ttl));
      }
    }
  }
  auto record = task_updated_record(task);
  if (!record) return std::unexpected(record.error());
  Commit batch;
  batch.add(std::move(*record));
  return commit(batch, writer);
}

Result<void> Hub::update_task(std::string_view task_id,
                              const TaskUpdate& update,
                              std::optional<ConnectionAgents> connection) {
  if (update.state && !is_task_state(*update.state)) {
    return invalid(invalid_task_state_message(*update.state));
  }
  if (update.progress) {
    if (auto ok = check_json("progress", *update.progress, true); !ok) {
      return ok;
    }
  }
  if (update.result) {
    if (auto ok = check_json("result", *update.result, false); !ok) return ok;
  }
  Commit batch;
  auto writer = lock_writer();
  if (connection) {
    if (auto allowed =
            engine::check_task_access(state_.tasks, task_id, *connection);
        !allowed) {
      return allowed;
    }
  }
  const TaskEntry* known = state_.tasks.find(task_id);
  if (!known) return task_not_found(task_id);
  if (known->metadata.terminal()) return {};  // terminal is final
  TaskMetadata task = known->metadata;
  const std::string at = now();
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
  // Checked here so stage_task_terminal may assume the record builds.
  auto record = task_updated_record(task);
  if (!record) return std::unexpected(record.error());
  if (task.terminal()) {
    std::map<std::string, Resume, std::less<>> resumes;
    stage_task_terminal(batch, task, task.error, resumes);
  } else {
    batch.add(std::move(*record));
  }
  return commit_and_publish(batch, writer);
}

Result<TaskMetadata> Hub::get_task(std::string_view task_id) const {
  std::shared_lock lock(state_mutex_);
  const TaskEntry* task = state_.tasks.find(task_id);
  if (!task) return task_not_found(task_id);
  return task->metadata;
}

std::vector<TaskMetadata> Hub::list_tasks(const TaskFilter& filter) const {
  std::shared_lock lock(state_mutex_);
  std::vector<TaskMetadata> out;
  for (const TaskEntry* entry : state_.tasks.in_order()) {
    if (out.size() >= filter.limit) break;
    const TaskMetadata& task = entry->metadata;
    if (filter.owner_id && task.owner_id != *filter.owner_id) continue;
    if (filter.channel_id && task.channel_id != *filter.channel_id) continue;
    if (filter.state && task.state != *filter.state) continue;
    out.push_back(task);
  }
  return out;
}

Result<void> Hub::checkpoint_task(std::string_view task_id, JsonText state,
                                  std::optional<ConnectionAgents> connection) {
  if (!is_valid_task_id(task_id)) return invalid_task_id(task_id);
  if (auto checked = check_json_text("checkpoint state", state); !checked) {
    return checked;
  }
  auto parsed = json::parse(state, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return invalid("a checkpoint must be a JSON object");
  auto writer = lock_writer();
  if (connection) {
    if (auto allowed =
            engine::check_task_access(state_.tasks, task_id, *connection);
        !allowed) {
      return allowed;
    }
  }
  const TaskEntry* task = state_.tasks.find(task_id);
  if (task && task->metadata.terminal()) {
    return {};  // the task is over; its last checkpoint stands
  }
  auto record = task_checkpointed_record(task_id, parsed.dump());
  if (!record) return std::unexpected(record.error());
  Commit batch;
  // The first wire write of an unobserved task's checkpoint claims it.
  if (connection && !task && !state_.tasks.checkpoint_writers(task_id)) {
    batch.add(checkpoint_writers_claimed_record(task_id, *connection));
  }
  batch.add(std::move(*record));
  return commit(batch, writer);
}

Result<std::optional<JsonText>> Hub::read_task_checkpoint(
    std::string_view task_id,
    std::optional<ConnectionAgents> connection) const {
  std::shared_lock lock(state_mutex_);
  if (connection) {
    if (auto allowed =
            engine::check_task_access(state_.tasks, task_id, *connection);
        !allowed) {
      return std::unexpected(allowed.error());
    }
  }
  return state_.tasks.checkpoint(task_id);
}

Result<void> Hub::check_task_access(std::string_view task_id,
                                    ConnectionAgents connection) const {
  std::shared_lock lock(state_mutex_);
  return engine::check_task_access(state_.tasks, task_id, connection);
}

std::optional<std::vector<std::string>> Hub::checkpoint_writers(
    std::string_view task_id) const {
  std::shared_lock lock(state_mutex_);
  const std::vector<std::string>* writers =
      state_.tasks.checkpoint_writers(task_id);
  if (!writers) return std::nullopt;
  return *writers;
}

void Hub::fire_task_event(std::string_view task_id, std::string_view kind,
                          const json& payload) {
  Commit batch;
  batch.notify([id = std::string(task_id), kind = std::string(kind),
                payload](HubListener& listener) {
    listener.on_task_event(id, kind, payload);
  });
  publish(batch);
}

Result<std::string> Hub::request_task_cancel(std::string_view requester_id,
                                             std::string_view task_id,
                                             std::string_view reason) {
  auto task = get_task(task_id);
  if (!task) return std::unexpected(task.error());
  if (task->terminal()) {
    return protocol_error("task '" + std::string(task_id) + "' is already " +
                          task->state + "; nothing to cancel");
  }
  if (!task->channel_id) {
    return protocol_error("task '" + std::string(task_id) +
                          "' has no channel to carry a cancel request");
  }
  Envelope envelope;
  envelope.channel_id = *task->channel_id;
  envelope.sender_id = std::string(requester_id);
  envelope.audience = std::vector{task->owner_id};
  envelope.event_type = std::string(event_type::kTaskCancelRequest);
  auto data = to_flex({{"task_id", task_id}, {"reason", reason}});
  if (!data) return std::unexpected(data.error());
  envelope.event_data = std::move(*data);
  envelope.task_id = std::string(task_id);
  return post_envelope(std::move(envelope));
}

// --- Hub-driven transitions ---------------------------------------------

void Hub::stage_task_terminal(
    Commit& batch, const TaskMetadata& task, std::string_view reason,
    std::map<std::string, Resume, std::less<>>& resumes) {
  // The task's own record cannot fail here: its JSON was stored before.
  batch.add(task_updated_record(task).value());
  const std::string at = task.completed_at.value_or(now());
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
  const AgentRecord* owner = state_.registry.find(task.owner_id);
  if (!owner || owner->observed_tasks.contains(task.task_id)) return;
  auto resume = resumes.find(task.owner_id);
  if (resume == resumes.end()) {
    resume = resumes.emplace(task.owner_id, owner->resume).first;
  }
  stage_observation(batch, task.owner_id, resume->second, *task.spec.capability,
                    task.state, latency_ms(task), task.task_id);
}

void Hub::stage_task_cascade(Commit& batch, std::string_view channel_id) {
  std::map<std::string, Resume, std::less<>> resumes;
  const std::string at = now();
  for (const TaskEntry* entry : state_.tasks.live_in_channel(channel_id)) {
    TaskMetadata task = entry->metadata;
    task.state = std::string(task_state::kExpired);
    task.completed_at = at;
    task.error = std::string(kTaskChannelClosed);
    stage_task_terminal(batch, task, kTaskChannelClosed, resumes);
  }
}

Result<void> Hub::expire_due_tasks() {
  Commit batch;
  auto writer = lock_writer();
  const Timestamp now_time = clock_->now();
  const std::string at = format_timestamp(now_time);
  std::map<std::string, Resume, std::less<>> resumes;
  for (const TaskEntry* entry : state_.tasks.in_order()) {
    const TaskMetadata& live = entry->metadata;
    if (live.terminal() || !live.expires_at ||
        !is_due(*live.expires_at, now_time, at)) {
      continue;
    }
    TaskMetadata task = live;
    task.state = std::string(task_state::kExpired);
    task.completed_at = at;
    task.error = std::string(kTaskTtlExpired);
    stage_task_terminal(batch, task, kTaskTtlExpired, resumes);
  }
  if (batch.empty()) return {};
  return commit_and_publish(batch, writer);
}

bool Hub::admits_cancel_request(const ChannelMetadata& channel,
                                const Envelope& envelope) const {
  if (envelope.event_type != event_type::kTaskCancelRequest ||
      channel.state != ChannelState::kActive || !envelope.task_id) {
    return false;
  }
  const TaskEntry* entry = state_.tasks.find(*envelope.task_id);
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
