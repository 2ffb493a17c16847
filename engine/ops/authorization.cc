#include "engine/ops/authorization.h"

#include <algorithm>
#include <map>

#include "engine/base/event_types.h"
#include "engine/base/python_repr.h"
#include "engine/ops/op_params.h"
#include "engine/tasks/task.h"

namespace parley::engine {

namespace {

using nlohmann::json;
using op_layer::Params;

// One check: runs before the op, reads hub state through its read API.
using Check = Result<void> (*)(const Hub&, const WireRequest&,
                               const Params& params);

struct WireRule {
  WireScope scope;
  Check check;  // null: nothing to check
};

// --- Shared pieces ----------------------------------------------------------

Result<void> bound(const WireRequest& request, std::string_view agent_id) {
  if (!holds(request.agents, agent_id)) return not_bound(agent_id);
  return {};
}

// The agent named by the string param `key` must be bound.
template <const char* kKey>
Result<void> agent_param(const Hub&, const WireRequest& request,
                         const Params& params) {
  PARLEY_TRY(agent_id, params.text(kKey));
  return bound(request, agent_id);
}

// A task id a request names must be one path segment (it becomes a store
// path in AG2). Values that are not strings are left to the op's own
// param check.
Result<void> task_id_shape(const json* value) {
  if (value && value->is_string() &&
      !is_valid_task_id(value->get_ref<const std::string&>())) {
    return invalid_task_id(value->get_ref<const std::string&>());
  }
  return {};
}

const json* field(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// --- Checks, one per kind of op ---------------------------------------------

constexpr char kAgentId[] = "agent_id";
constexpr char kCreatorId[] = "creator_id";
constexpr char kSenderId[] = "sender_id";

Result<void> check_register(const Hub& hub, const WireRequest& request,
                            const Params& params) {
  PARLEY_TRY(passport, params.object("passport"));
  const json* kind = field(passport, "kind");
  if (!kind || *kind != "remote_agent") return {};
  if (!request.options.allow_remote_agent_registration) {
    return access_denied(
        "this hub does not accept remote_agent registration over the wire");
  }
  if (remote_agent_owners(hub, request).empty()) {
    return access_denied(
        "registering a remote_agent needs a connection holding an agent of "
        "this hub");
  }
  return {};
}

Result<void> check_list_channels(const Hub&, const WireRequest& request,
                                 const Params& params) {
  PARLEY_TRY(agent_id, params.optional_text("agent_id"));
  if (agent_id) return bound(request, *agent_id);
  return {};  // the op lists only channels the connection takes part in
}

Result<void> check_report_turn_failure(const Hub& hub,
                                       const WireRequest& request,
                                       const Params& params) {
  PARLEY_TRY(agent_id, params.text("agent_id"));
  PARLEY_CHECK(bound(request, agent_id));
  PARLEY_TRY(channel_id, params.text("channel_id"));
  PARLEY_TRY(channel, hub.get_channel(channel_id));
  if (!channel.has_participant(agent_id)) {
    return access_denied("agent is not a participant of channel " +
                         python_repr(channel_id));
  }
  return {};
}

Result<void> check_record_observation(const Hub& hub,
                                      const WireRequest& request,
                                      const Params& params) {
  PARLEY_TRY(owner_id, params.text("owner_id"));
  PARLEY_CHECK(bound(request, owner_id));
  PARLEY_CHECK(task_id_shape(params.optional("task_id")));
  PARLEY_TRY(task_id, params.optional_text("task_id"));
  if (!task_id) return {};
  auto task = hub.get_task(*task_id);
  if (task) return bound(request, task->owner_id);
  return {};
}

// A post's envelope, as the JSON check reads it: the string fields, and
// the audience when it is a list (a member that is not a string: nullopt).
struct PostedFields {
  std::optional<std::string_view> sender_id;
  std::optional<std::string_view> task_id;
  std::optional<std::string_view> event_type;
  std::optional<std::string_view> channel_id;
  std::optional<std::vector<std::optional<std::string_view>>> audience;
};

// After the sender's binding: the wire may not carry a malformed task id,
// the hub's own channel events, or an audience outside the channel.
Result<void> check_posted(const Hub& hub, const PostedFields& posted) {
  if (posted.task_id && !is_valid_task_id(*posted.task_id)) {
    return invalid_task_id(*posted.task_id);
  }
  if (const auto type = posted.event_type;
      type && event_type::is_channel_protocol(*type) &&
      *type != event_type::kChannelInviteAck &&
      *type != event_type::kChannelInviteReject) {
    return protocol_error(python_repr(*type) + " is emitted only by the hub");
  }
  if (!posted.audience || !posted.channel_id) return {};
  auto channel = hub.get_channel(*posted.channel_id);
  if (!channel) return {};  // the hub answers "channel not found"
  for (const auto& member : *posted.audience) {
    if (!member || !channel->has_participant(*member)) {
      return protocol_error(
          "audience must list only participants of the channel");
    }
  }
  return {};
}

// Only well-typed fields are checked: anything else fails the op's strict
// envelope parse before the hub sees it.
Result<void> check_post_envelope(const Hub& hub, const WireRequest& request,
                                 const Params& params) {
  PARLEY_TRY(envelope, params.object("envelope"));
  auto text = [&](std::string_view key) -> std::optional<std::string_view> {
    const json* value = field(envelope, key);
    if (!value || !value->is_string()) return std::nullopt;
    return value->get_ref<const std::string&>();
  };
  PostedFields posted{.sender_id = text("sender_id"),
                      .task_id = text("task_id"),
                      .event_type = text("event_type"),
                      .channel_id = text("channel_id")};
  if (const json* audience = field(envelope, "audience");
      audience && audience->is_array()) {
    auto& members = posted.audience.emplace();
    for (const json& member : *audience) {
      members.push_back(member.is_string()
                            ? std::optional<std::string_view>(
                                  member.get_ref<const std::string&>())
                            : std::nullopt);
    }
  }
  if (posted.sender_id) PARLEY_CHECK(bound(request, *posted.sender_id));
  return check_posted(hub, posted);
}

Result<void> check_observe_task(const Hub& hub, const WireRequest& request,
                                const Params& params) {
  PARLEY_TRY(metadata, params.object("metadata"));
  const json* task_id = field(metadata, "task_id");
  PARLEY_CHECK(task_id_shape(task_id));
  if (const json* owner = field(metadata, "owner_id");
      owner && owner->is_string()) {
    PARLEY_CHECK(bound(request, owner->get_ref<const std::string&>()));
  }
  if (task_id && task_id->is_string()) {
    return hub.check_task_access(task_id->get_ref<const std::string&>(),
                                 request.agents);
  }
  return {};
}

// The hub checks the same again in the hold of its lock that reads or
// changes the task.
Result<void> check_task(const Hub& hub, const WireRequest& request,
                        const Params& params) {
  PARLEY_CHECK(task_id_shape(params.optional("task_id")));
  PARLEY_TRY(task_id, params.text("task_id"));
  return hub.check_task_access(task_id, request.agents);
}

Result<void> check_task_id_shape(const Hub&, const WireRequest&,
                                 const Params& params) {
  return task_id_shape(params.optional("task_id"));
}

// The channel must exist and hold a bound participant.
Result<void> check_channel(const Hub& hub, const WireRequest& request,
                           const Params& params) {
  PARLEY_TRY(channel_id, params.text("channel_id"));
  PARLEY_TRY(channel, hub.get_channel(channel_id));
  if (!has_participant(channel, request.agents)) {
    return access_denied("connection has no participant in channel " +
                         python_repr(channel_id));
  }
  return {};
}

// --- The table --------------------------------------------------------------

// Every op of the control plane, once. Parley's own ops: read_channel_log
// reads a channel like read_wal; health, read_audit, append_audit and
// tick_expectations act on the whole hub (its counters, every agent's
// audit trail, the expectation sweeper), so they are for the operator
// in-process and refused over the wire.
const std::map<std::string_view, WireRule, std::less<>>& rules() {
  static const std::map<std::string_view, WireRule, std::less<>> table = {
      // Identity and discovery.
      {"register", {WireScope::kUnscoped, check_register}},
      {"get_agent", {WireScope::kUnscoped, nullptr}},
      {"get_resume", {WireScope::kUnscoped, nullptr}},
      {"get_skill", {WireScope::kUnscoped, nullptr}},
      {"get_rule", {WireScope::kUnscoped, nullptr}},
      {"find_agent_id", {WireScope::kUnscoped, nullptr}},
      {"names_for", {WireScope::kUnscoped, nullptr}},
      {"list_agents", {WireScope::kUnscoped, nullptr}},
      {"set_resume", {WireScope::kAgent, agent_param<kAgentId>}},
      {"set_skill", {WireScope::kAgent, agent_param<kAgentId>}},
      {"set_rule", {WireScope::kAgent, agent_param<kAgentId>}},
      {"unregister", {WireScope::kAgent, agent_param<kAgentId>}},
      {"record_observation", {WireScope::kAgent, check_record_observation}},
      // Channels.
      {"create_channel", {WireScope::kAgent, agent_param<kCreatorId>}},
      {"list_channels", {WireScope::kAgent, check_list_channels}},
      {"get_channel", {WireScope::kChannel, check_channel}},
      {"close_channel", {WireScope::kChannel, check_channel}},
      {"post_envelope", {WireScope::kAgent, check_post_envelope}},
      {"read_wal", {WireScope::kChannel, check_channel}},
      {"read_channel_log", {WireScope::kChannel, check_channel}},
      {"find_envelope_by_causation", {WireScope::kChannel, check_channel}},
      {"can_send", {WireScope::kAgent, agent_param<kSenderId>}},
      {"pending_turns_for", {WireScope::kAgent, agent_param<kAgentId>}},
      {"report_turn_failure", {WireScope::kAgent, check_report_turn_failure}},
      // Tasks.
      {"get_task", {WireScope::kTaskReads, check_task_id_shape}},
      {"list_tasks", {WireScope::kTaskReads, nullptr}},
      {"observe_task", {WireScope::kAgent, check_observe_task}},
      {"update_task", {WireScope::kTask, check_task}},
      {"fire_task_event", {WireScope::kTask, check_task}},
      {"checkpoint_task", {WireScope::kTask, check_task}},
      {"read_task_checkpoint", {WireScope::kTask, check_task}},
      // The operator's.
      {"health", {WireScope::kOperator, nullptr}},
      {"read_audit", {WireScope::kOperator, nullptr}},
      {"append_audit", {WireScope::kOperator, nullptr}},
      {"tick_expectations", {WireScope::kOperator, nullptr}},
  };
  return table;
}

}  // namespace

std::optional<WireScope> wire_scope(std::string_view op) {
  auto it = rules().find(op);
  if (it == rules().end()) return std::nullopt;
  return it->second.scope;
}

Result<void> authorize(const Hub& hub, const WireRequest& request,
                       std::string_view op, const json& params) {
  auto it = rules().find(op);
  if (it == rules().end()) {
    return protocol_error("unknown control-plane op: '" + std::string(op) +
                          "'");
  }
  const WireRule& rule = it->second;
  if (rule.scope == WireScope::kOperator) {
    return access_denied(python_repr(op) +
                         " is the hub operator's op, not accepted over the "
                         "wire");
  }
  if (!rule.check) return {};
  return rule.check(hub, request, Params(params));
}

Result<void> authorize_post(const Hub& hub, const Caller& caller,
                            const Envelope& envelope) {
  // The one binding a post needs, asked directly: no snapshot of them all.
  if (!caller.holds(envelope.sender_id)) return not_bound(envelope.sender_id);
  PostedFields posted{.sender_id = envelope.sender_id,
                      .event_type = envelope.event_type,
                      .channel_id = envelope.channel_id};
  if (envelope.task_id) posted.task_id = *envelope.task_id;
  if (envelope.audience) {
    posted.audience.emplace(envelope.audience->begin(),
                            envelope.audience->end());
  }
  return check_posted(hub, posted);
}

bool has_participant(const ChannelMetadata& channel,
                     const std::vector<std::string>& agents) {
  return std::ranges::any_of(channel.participants,
                             [&](const Participant& participant) {
                               return holds(agents, participant.agent_id);
                             });
}

bool sees_task(const Hub& hub, const WireRequest& request,
               const TaskMetadata& task) {
  if (holds(request.agents, task.owner_id)) return true;
  if (!task.channel_id) return false;
  auto channel = hub.get_channel(*task.channel_id);
  return channel && has_participant(*channel, request.agents);
}

std::vector<std::string> remote_agent_owners(const Hub& hub,
                                             const WireRequest& request) {
  std::vector<std::string> owners;
  for (const std::string& agent_id : request.agents) {
    auto passport = hub.get_agent(agent_id);
    if (passport && passport->agent_id == agent_id &&
        passport->effective_kind() != "remote_agent") {
      owners.push_back(agent_id);
    }
  }
  return owners;
}

Result<void> authorize_mirror_failed(const Hub& hub, const WireRequest& request,
                                     std::string_view task_id,
                                     const json& payload) {
  const std::string& owner_id =
      payload["owner_id"].get_ref<const std::string&>();
  PARLEY_CHECK(bound(request, owner_id));
  const json* channel_id = field(payload, "channel_id");
  if (hub.get_task(task_id) || !channel_id || channel_id->is_null()) {
    return {};  // an observed task's own owner and channel: the op checks
  }
  if (!channel_id->is_string()) {
    return protocol_error("mirror_failed payload channel_id must be a string");
  }
  const std::string& id = channel_id->get_ref<const std::string&>();
  PARLEY_TRY(channel, hub.get_channel(id));
  if (!channel.has_participant(owner_id)) {
    return access_denied("task owner is not a participant of channel " +
                         python_repr(id));
  }
  return {};
}

Passport wire_passport(Passport passport) {
  passport.auth.claim = "{}";
  return passport;
}

Result<bool> admit_remote_agent_hello(const Hub& hub, const Caller& caller,
                                      std::string_view agent_id) {
  auto passport = hub.get_agent(agent_id);
  if (!passport || passport->agent_id != agent_id) {
    return not_found("agent not registered: " + std::string(agent_id));
  }
  if (passport->effective_kind() != "remote_agent") return false;
  for (const std::string& owner : hub.agent_owners(agent_id)) {
    if (caller.holds(owner)) return true;
  }
  return fail(ErrorKind::kAuthFailed,
              "remote agent " + python_repr(passport->name) +
                  " re-attaches only alongside its owner");
}

}  // namespace parley::engine
