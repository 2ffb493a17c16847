#include "engine/ops/control_plane.h"

#include <algorithm>
#include <limits>

#include "engine/json/records_json.h"
#include "engine/ops/op_params.h"
#include "engine/ops/task_ops.h"

namespace parley::engine {

namespace {

using nlohmann::json;
using op_layer::Answer;
using op_layer::done;
using op_layer::list_json;
using op_layer::Mutation;
using op_layer::mutation;
using op_layer::OpTable;
using op_layer::Params;
using op_layer::Reply;

Result<Answer> register_op(Hub& hub, const Params& params,
                           const WireRequest* wire) {
  PARLEY_CHECK(params.only({"passport", "resume", "skill_md", "rule"}));
  PARLEY_TRY(passport_json, params.object("passport"));
  PARLEY_TRY(resume_json, params.object("resume"));
  PARLEY_TRY(passport, passport_from_json(passport_json));
  PARLEY_TRY(resume, resume_from_json(resume_json));
  PARLEY_TRY(skill_md, params.optional_text("skill_md"));
  PARLEY_TRY(rule_json, params.optional_object("rule"));
  std::optional<Rule> rule;
  if (rule_json) {
    PARLEY_TRY(parsed, rule_from_json(*rule_json));
    rule = std::move(parsed);
  }
  // Over the wire a remote_agent is owned by the connection's own agents
  // (authorize() refused the request when it holds none).
  std::vector<std::string> owners;
  if (wire && passport.effective_kind() == "remote_agent") {
    owners = remote_agent_owners(hub, *wire);
  }
  return mutation<Passport>(
      [&hub, passport = std::move(passport), resume = std::move(resume),
       skill_md = std::move(skill_md), rule = std::move(rule),
       owners = std::move(owners)](Done<Passport> done,
                                   Dispatch dispatch) mutable {
        hub.register_identity(std::move(passport), std::move(resume),
                              std::move(skill_md), std::move(rule),
                              std::move(owners), std::move(done), dispatch);
      },
      [over_wire = wire != nullptr](Passport& stamped) {
        return to_json(over_wire ? wire_passport(std::move(stamped)) : stamped);
      });
}

Result<Answer> create_channel_op(Hub& hub, const Params& params,
                                 const WireRequest*) {
  PARLEY_CHECK(params.only({"creator_id", "manifest_type", "manifest_version",
                            "participants", "required_acks", "ttl", "knobs",
                            "intent", "labels"}));
  CreateChannelRequest request;
  PARLEY_TRY(creator_id, params.text("creator_id"));
  PARLEY_TRY(manifest_type, params.text("manifest_type"));
  PARLEY_TRY(version, params.optional_integer("manifest_version"));
  PARLEY_TRY(participants, params.texts("participants"));
  PARLEY_TRY(required_acks, params.optional_integer("required_acks"));
  PARLEY_TRY(knobs, params.optional_object("knobs"));
  PARLEY_TRY(intent, params.optional_text("intent"));
  PARLEY_TRY(labels, params.optional_object("labels"));
  request.creator_id = std::move(creator_id);
  request.manifest_type = std::move(manifest_type);
  request.manifest_version = version.value_or(1);
  request.participants = std::move(participants);
  request.required_acks = required_acks;
  if (const json* ttl = params.optional("ttl")) {
    if (ttl->is_number_integer()) {
      request.ttl = ttl->get<std::int64_t>();
    } else if (ttl->is_string()) {
      request.ttl = ttl->get<std::string>();
    } else {
      return invalid("param 'ttl' must be an integer or a string");
    }
  }
  if (knobs) request.knobs = knobs->dump();
  if (labels) {
    for (const auto& [key, value] : labels->items()) {
      if (!value.is_string()) {
        return invalid("param 'labels' must map strings to strings");
      }
    }
    request.labels = labels->dump();
  }
  request.intent = std::move(intent);
  return mutation<ChannelMetadata>(
      [&hub, request = std::move(request)](Done<ChannelMetadata> done,
                                           Dispatch dispatch) {
        hub.create_channel(request, std::move(done), dispatch);
      },
      [](const ChannelMetadata& metadata) { return to_json(metadata); });
}

Result<Answer> post_envelope_op(Hub& hub, const Params& params,
                                const WireRequest*) {
  PARLEY_CHECK(params.only({"envelope"}));
  PARLEY_TRY(envelope_json, params.object("envelope"));
  PARLEY_TRY(envelope, envelope_from_json(envelope_json));
  return mutation<std::string>(
      [&hub, envelope = std::move(envelope)](Done<std::string> done,
                                             Dispatch dispatch) mutable {
        hub.post_envelope(std::move(envelope), std::move(done), dispatch);
      },
      [](const std::string& id) { return json(id); });
}

Result<json> list_agents_op(Hub& hub, const Params& params,
                            const WireRequest* wire) {
  PARLEY_CHECK(
      params.only({"capability", "query", "kind", "sort_by", "limit"}));
  AgentFilter filter;
  PARLEY_TRY(capability, params.optional_text("capability"));
  PARLEY_TRY(query, params.optional_text("query"));
  PARLEY_TRY(kind, params.optional_text("kind"));
  PARLEY_TRY(sort_by, params.optional_text("sort_by"));
  PARLEY_TRY(limit, params.optional_integer("limit"));
  filter.capability = std::move(capability);
  filter.query = std::move(query);
  filter.kind = std::move(kind);
  filter.sort_by = std::move(sort_by);
  filter.limit =
      static_cast<std::size_t>(std::max<std::int64_t>(0, limit.value_or(50)));
  std::vector<Passport> passports = hub.list_agents(filter);
  if (wire) {
    for (Passport& passport : passports) {
      passport = wire_passport(std::move(passport));
    }
  }
  return list_json(passports);
}

// Over the wire without an agent_id: only the channels some agent of the
// connection takes part in (any state, creation order, then `limit`).
Result<json> list_channels_op(Hub& hub, const Params& params,
                              const WireRequest* wire) {
  PARLEY_CHECK(params.only({"agent_id", "limit"}));
  PARLEY_TRY(agent_id, params.optional_text("agent_id"));
  PARLEY_TRY(limit_param, params.optional_integer("limit"));
  const auto limit = static_cast<std::size_t>(
      std::max<std::int64_t>(0, limit_param.value_or(50)));
  if (agent_id) return list_json(hub.list_channels(*agent_id, {}, limit));
  if (!wire) return list_json(hub.list_channels({}, {}, limit));
  if (wire->agents.size() == 1) {
    return list_json(hub.list_channels(wire->agents.front(), {}, limit));
  }
  std::vector<ChannelMetadata> channels;
  if (!wire->agents.empty()) {
    for (ChannelMetadata& channel :
         hub.list_channels({}, {}, std::numeric_limits<std::size_t>::max())) {
      if (channels.size() >= limit) break;
      if (has_participant(channel, wire->agents)) {
        channels.push_back(std::move(channel));
      }
    }
  }
  return list_json(channels);
}

Result<json> read_wal_op(Hub& hub, const Params& params, const WireRequest*) {
  PARLEY_CHECK(params.only({"channel_id", "since", "until"}));
  PARLEY_TRY(channel_id, params.text("channel_id"));
  PARLEY_TRY(since, params.optional_integer("since"));
  PARLEY_TRY(until, params.optional_integer("until"));
  PARLEY_TRY(envelopes, hub.read_wal(channel_id, since.value_or(0), until));
  return list_json(envelopes);
}

// Parley's own op: a channel's envelopes with their per-channel sequences,
// from `from_sequence` (default 1) to `to_sequence` (default: the last).
Result<json> read_channel_log_op(Hub& hub, const Params& params,
                                 const WireRequest*) {
  PARLEY_CHECK(params.only({"channel_id", "from_sequence", "to_sequence"}));
  PARLEY_TRY(channel_id, params.text("channel_id"));
  PARLEY_TRY(from, params.optional_integer("from_sequence"));
  PARLEY_TRY(to, params.optional_integer("to_sequence"));
  const std::int64_t first = std::max<std::int64_t>(1, from.value_or(1));
  PARLEY_TRY(envelopes,
             hub.read_wal(channel_id, first - 1,
                          to ? std::optional(std::max<std::int64_t>(*to, 0))
                             : std::nullopt));
  json out = json::array();
  for (const Envelope& envelope : envelopes) {
    out.push_back(
        {{"sequence", envelope.sequence}, {"envelope", to_json(envelope)}});
  }
  return out;
}

const OpTable& ops() {
  static const OpTable table = {
      {"register", register_op},
      {"get_agent",
       [](Hub& hub, const Params& params,
          const WireRequest* wire) -> Result<json> {
         PARLEY_CHECK(params.only({"name_or_id"}));
         PARLEY_TRY(name_or_id, params.text("name_or_id"));
         PARLEY_TRY(passport, hub.get_agent(name_or_id));
         return to_json(wire ? wire_passport(std::move(passport)) : passport);
       }},
      {"get_resume",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(resume, hub.get_resume(agent_id));
         return to_json(resume);
       }},
      {"get_skill",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         auto skill = hub.get_skill(agent_id);
         return skill ? json(*skill) : json(nullptr);
       }},
      {"get_rule",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(rule, hub.get_rule(agent_id));
         return to_json(rule);
       }},
      {"find_agent_id",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({"name"}));
         PARLEY_TRY(name, params.text("name"));
         auto id = hub.find_agent_id(name);
         return id ? json(*id) : json(nullptr);
       }},
      {"names_for",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_ids"}));
         PARLEY_TRY(ids, params.texts("agent_ids"));
         json out = json::object();
         for (const auto& id : ids) out[id] = hub.name_for(id);
         return out;
       }},
      {"list_agents", list_agents_op},
      {"set_resume",
       [](Hub& hub, const Params& params,
          const WireRequest*) -> Result<Answer> {
         PARLEY_CHECK(params.only({"agent_id", "resume"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(resume_json, params.object("resume"));
         PARLEY_TRY(resume, resume_from_json(resume_json));
         return mutation(
             [&hub, agent_id = std::move(agent_id), resume = std::move(resume)](
                 Done<void> done, Dispatch dispatch) mutable {
               hub.set_resume(agent_id, std::move(resume), std::move(done),
                              dispatch);
             });
       }},
      {"set_skill",
       [](Hub& hub, const Params& params,
          const WireRequest*) -> Result<Answer> {
         PARLEY_CHECK(params.only({"agent_id", "skill_md"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(skill_md, params.optional_text("skill_md"));
         return mutation([&hub, agent_id = std::move(agent_id),
                          skill_md = std::move(skill_md)](
                             Done<void> done, Dispatch dispatch) mutable {
           hub.set_skill(agent_id, std::move(skill_md), std::move(done),
                         dispatch);
         });
       }},
      {"set_rule",
       [](Hub& hub, const Params& params,
          const WireRequest*) -> Result<Answer> {
         PARLEY_CHECK(params.only({"agent_id", "rule"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(rule_json, params.object("rule"));
         PARLEY_TRY(rule, rule_from_json(rule_json));
         return mutation([&hub, agent_id = std::move(agent_id),
                          rule = std::move(rule)](Done<void> done,
                                                  Dispatch dispatch) mutable {
           hub.set_rule(agent_id, std::move(rule), std::move(done), dispatch);
         });
       }},
      {"unregister",
       [](Hub& hub, const Params& params,
          const WireRequest*) -> Result<Answer> {
         PARLEY_CHECK(params.only({"agent_id"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         return mutation([&hub, agent_id = std::move(agent_id)](
                             Done<void> done, Dispatch dispatch) {
           hub.unregister(agent_id, std::move(done), dispatch);
         });
       }},
      {"record_observation",
       [](Hub& hub, const Params& params,
          const WireRequest*) -> Result<Answer> {
         PARLEY_CHECK(params.only(
             {"owner_id", "capability", "outcome", "latency_ms", "task_id"}));
         PARLEY_TRY(owner_id, params.text("owner_id"));
         PARLEY_TRY(capability, params.text("capability"));
         PARLEY_TRY(outcome, params.text("outcome"));
         PARLEY_TRY(task_id, params.optional_text("task_id"));
         std::optional<double> latency;
         if (const json* value = params.optional("latency_ms")) {
           if (!value->is_number()) {
             return invalid("param 'latency_ms' must be a number");
           }
           latency = value->get<double>();
         }
         return mutation([&hub, owner_id = std::move(owner_id),
                          capability = std::move(capability),
                          outcome = std::move(outcome), latency,
                          task_id = std::move(task_id)](
                             Done<void> done, Dispatch dispatch) mutable {
           hub.record_observation(owner_id, capability, outcome, latency,
                                  std::move(task_id), std::move(done),
                                  dispatch);
         });
       }},
      {"create_channel", create_channel_op},
      {"get_channel",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({"channel_id"}));
         PARLEY_TRY(channel_id, params.text("channel_id"));
         PARLEY_TRY(metadata, hub.get_channel(channel_id));
         return to_json(metadata);
       }},
      {"list_channels", list_channels_op},
      {"close_channel",
       [](Hub& hub, const Params& params,
          const WireRequest*) -> Result<Answer> {
         PARLEY_CHECK(params.only({"channel_id", "reason"}));
         PARLEY_TRY(channel_id, params.text("channel_id"));
         PARLEY_TRY(reason, params.optional_text("reason"));
         return mutation<ChannelMetadata>(
             [&hub, channel_id = std::move(channel_id),
              reason = reason.value_or("")](Done<ChannelMetadata> done,
                                            Dispatch dispatch) {
               hub.close_channel(channel_id, reason, std::move(done), dispatch);
             },
             [](const ChannelMetadata& metadata) { return to_json(metadata); });
       }},
      {"post_envelope", post_envelope_op},
      {"read_wal", read_wal_op},
      {"find_envelope_by_causation",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({"channel_id", "sender_id", "causation_id"}));
         PARLEY_TRY(channel_id, params.text("channel_id"));
         PARLEY_TRY(sender_id, params.text("sender_id"));
         PARLEY_TRY(causation_id, params.text("causation_id"));
         PARLEY_TRY(envelope, hub.find_envelope_by_causation(
                                  channel_id, sender_id, causation_id));
         return envelope ? to_json(*envelope) : json(nullptr);
       }},
      {"can_send",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({"channel_id", "sender_id", "event_type"}));
         PARLEY_TRY(channel_id, params.text("channel_id"));
         PARLEY_TRY(sender_id, params.text("sender_id"));
         PARLEY_TRY(type, params.optional_text("event_type"));
         return json(hub.can_send(
             channel_id, sender_id,
             type ? std::optional<std::string_view>(*type) : std::nullopt));
       }},
      {"pending_turns_for",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         json out = json::array();
         for (const PendingTurn& turn : hub.pending_turns_for(agent_id)) {
           out.push_back({{"channel_id", turn.channel_id},
                          {"triggering_envelope_id",
                           turn.triggering_envelope_id
                               ? json(*turn.triggering_envelope_id)
                               : json(nullptr)},
                          {"expected_at", turn.expected_at}});
         }
         return out;
       }},
      {"report_turn_failure",
       [](Hub& hub, const Params& params,
          const WireRequest*) -> Result<Answer> {
         PARLEY_CHECK(
             params.only({"channel_id", "agent_id", "envelope_id", "error"}));
         PARLEY_TRY(channel_id, params.text("channel_id"));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(envelope_id, params.text("envelope_id"));
         PARLEY_TRY(error, params.optional_text("error"));
         return mutation([&hub, channel_id = std::move(channel_id),
                          agent_id = std::move(agent_id),
                          envelope_id = std::move(envelope_id),
                          message = error.value_or("")](Done<void> done,
                                                        Dispatch dispatch) {
           hub.report_turn_failure(channel_id, agent_id, envelope_id, message,
                                   std::move(done), dispatch);
         });
       }},
      {"read_channel_log", read_channel_log_op},
      // Parley's own: health, the audit log.
      {"health",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({}));
         return to_json(hub.health());
       }},
      {"read_audit",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({}));
         PARLEY_TRY(records, hub.read_audit());
         json out = json::array();
         for (const auto& record : records) out.push_back(json::parse(record));
         return out;
       }},
      {"append_audit",
       [](Hub& hub, const Params& params,
          const WireRequest*) -> Result<Answer> {
         PARLEY_CHECK(params.only({"record"}));
         PARLEY_TRY(record, params.object("record"));
         return mutation([&hub, record = record.dump()](Done<void> done,
                                                        Dispatch dispatch) {
           hub.append_audit(record, std::move(done), dispatch);
         });
       }},
      // Parley's own: one expectation tick at the hub's clock.
      {"tick_expectations",
       [](Hub& hub, const Params& params, const WireRequest*) -> Result<json> {
         PARLEY_CHECK(params.only({}));
         PARLEY_TRY(fired, hub.tick_expectations());
         return json{{"fired", fired}};
       }},
  };
  return table;
}

// Every op: the table above and the groups kept in their own files.
const OpTable& all_ops() {
  static const OpTable table = [] {
    OpTable all = ops();
    op_layer::add_task_ops(all);
    return all;
  }();
  return table;
}

}  // namespace

std::vector<std::string> ControlPlane::op_names() {
  std::vector<std::string> names;
  for (const auto& [name, op] : all_ops()) names.push_back(name);
  return names;
}

WireRequest ControlPlane::wire_request(const Caller& caller) const {
  WireRequest wire{.agents = caller.bound_agents(), .options = options_};
  std::ranges::sort(wire.agents);
  wire.agents.erase(std::unique(wire.agents.begin(), wire.agents.end()),
                    wire.agents.end());
  return wire;
}

Result<Answer> ControlPlane::prepare(std::string_view op, const json& params,
                                     const Caller* caller) {
  auto it = all_ops().find(op);
  if (it == all_ops().end()) {
    return protocol_error("unknown control-plane op: '" + std::string(op) +
                          "'");
  }
  if (!params.is_object()) return invalid("params must be a JSON object");
  if (!caller) return it->second(hub_, Params(params), nullptr);
  const WireRequest wire = wire_request(*caller);
  PARLEY_CHECK(authorize(hub_, wire, op, params));
  return it->second(hub_, Params(params), &wire);
}

Result<json> ControlPlane::call(std::string_view op, const json& params,
                                const Caller* caller) {
  PARLEY_TRY(answer, prepare(op, params, caller));
  if (json* ready = std::get_if<json>(&answer)) return std::move(*ready);
  Result<json> out = std::unexpected(Error{ErrorKind::kStorage, "not run"});
  std::get<Mutation>(answer)(Dispatch::kInline, [&out](Result<json> result) {
    out = std::move(result);
  });
  return out;
}

void ControlPlane::call(std::string_view op, const json& params,
                        const Caller* caller, Reply reply) {
  auto answer = prepare(op, params, caller);
  if (!answer) return reply(std::unexpected(answer.error()));
  if (json* ready = std::get_if<json>(&*answer)) {
    return reply(std::move(*ready));
  }
  std::get<Mutation> (*answer)(Dispatch::kAsync, std::move(reply));
}

void ControlPlane::post_envelope(std::shared_ptr<Envelope> envelope,
                                 const Caller& caller, Done<std::string> done) {
  if (auto allowed = authorize_post(hub_, caller, *envelope); !allowed) {
    return done(std::unexpected(allowed.error()));
  }
  hub_.post_envelope(std::move(envelope), std::move(done), Dispatch::kAsync);
}

}  // namespace parley::engine
