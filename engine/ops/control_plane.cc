#include "engine/ops/control_plane.h"

#include <functional>
#include <initializer_list>
#include <map>

#include "engine/ops/records_json.h"

namespace parley::engine {

namespace {

using nlohmann::json;

// Binds `name` to the value of a Result expression, or returns its error.
#define PARLEY_TRY(name, expression)                                 \
  auto name##_result = (expression);                                 \
  if (!name##_result) return std::unexpected(name##_result.error()); \
  auto& name = *name##_result

// Returns the error of a Result<void> expression, if any.
#define PARLEY_CHECK(expression)             \
  if (auto checked = (expression); !checked) \
  return std::unexpected(checked.error())

// Strict reading of one op's params (spec §11.5: a missing param is a
// generic "error" naming the key, as AG2's KeyError does).
class Params {
 public:
  explicit Params(const json& params) : params_(params) {}

  Result<void> only(std::initializer_list<std::string_view> keys) const {
    for (const auto& [key, value] : params_.items()) {
      if (std::ranges::find(keys, key) == keys.end()) {
        return invalid("unexpected param '" + key + "'");
      }
    }
    return {};
  }

  Result<const json*> required(std::string_view key) const {
    auto it = params_.find(std::string(key));
    if (it == params_.end()) return invalid("'" + std::string(key) + "'");
    return &*it;
  }

  // Absent and null both read as nullptr.
  const json* optional(std::string_view key) const {
    auto it = params_.find(std::string(key));
    return it == params_.end() || it->is_null() ? nullptr : &*it;
  }

  Result<std::string> text(std::string_view key) const {
    PARLEY_TRY(value, required(key));
    return as_text(key, *value);
  }

  Result<std::optional<std::string>> optional_text(std::string_view key) const {
    const json* value = optional(key);
    if (!value) return std::optional<std::string>{};
    PARLEY_TRY(text, as_text(key, *value));
    return std::optional<std::string>(text);
  }

  Result<std::optional<std::int64_t>> optional_integer(
      std::string_view key) const {
    const json* value = optional(key);
    if (!value) return std::optional<std::int64_t>{};
    if (!value->is_number_integer()) return wrong_type(key, "an integer");
    return std::optional<std::int64_t>(value->get<std::int64_t>());
  }

  Result<json> object(std::string_view key) const {
    PARLEY_TRY(value, required(key));
    if (!value->is_object()) return wrong_type(key, "an object");
    return *value;
  }

  Result<std::optional<json>> optional_object(std::string_view key) const {
    const json* value = optional(key);
    if (!value) return std::optional<json>{};
    if (!value->is_object()) return wrong_type(key, "an object");
    return std::optional<json>(*value);
  }

  Result<std::vector<std::string>> texts(std::string_view key) const {
    PARLEY_TRY(value, required(key));
    if (!value->is_array()) return wrong_type(key, "a list of strings");
    std::vector<std::string> out;
    for (const json& element : *value) {
      if (!element.is_string()) return wrong_type(key, "a list of strings");
      out.push_back(element.get<std::string>());
    }
    return out;
  }

 private:
  static std::unexpected<Error> wrong_type(std::string_view key,
                                           std::string_view type) {
    return invalid("param '" + std::string(key) + "' must be " +
                   std::string(type));
  }
  static Result<std::string> as_text(std::string_view key, const json& value) {
    if (!value.is_string()) return wrong_type(key, "a string");
    return value.get<std::string>();
  }

  const json& params_;
};

template <typename T>
json list_json(const std::vector<T>& items) {
  json out = json::array();
  for (const auto& item : items) out.push_back(to_json(item));
  return out;
}

Result<json> done(const Result<void>& result) {
  if (!result) return std::unexpected(result.error());
  return json(nullptr);
}

using Op = std::function<Result<json>(Hub&, const Params&)>;

Result<json> register_op(Hub& hub, const Params& params) {
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
  PARLEY_TRY(stamped,
             hub.register_identity(std::move(passport), std::move(resume),
                                   std::move(skill_md), std::move(rule)));
  return to_json(stamped);
}

Result<json> create_channel_op(Hub& hub, const Params& params) {
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
  PARLEY_TRY(metadata, hub.create_channel(request));
  return to_json(metadata);
}

Result<json> post_envelope_op(Hub& hub, const Params& params) {
  PARLEY_CHECK(params.only({"envelope"}));
  PARLEY_TRY(envelope_json, params.object("envelope"));
  PARLEY_TRY(envelope, envelope_from_json(envelope_json));
  if (envelope.event_data.size() > kMaxEventDataBytes) {
    return invalid(
        "event_data is " + std::to_string(envelope.event_data.size()) +
        " bytes encoded; the limit is " + std::to_string(kMaxEventDataBytes));
  }
  PARLEY_TRY(id, hub.post_envelope(std::move(envelope)));
  return json(id);
}

Result<json> list_agents_op(Hub& hub, const Params& params) {
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
  return list_json(hub.list_agents(filter));
}

Result<json> read_wal_op(Hub& hub, const Params& params) {
  PARLEY_CHECK(params.only({"channel_id", "since", "until"}));
  PARLEY_TRY(channel_id, params.text("channel_id"));
  PARLEY_TRY(since, params.optional_integer("since"));
  PARLEY_TRY(until, params.optional_integer("until"));
  PARLEY_TRY(envelopes, hub.read_wal(channel_id, since.value_or(0), until));
  return list_json(envelopes);
}

// Parley's own op: a channel's envelopes with their per-channel sequences,
// from `from_sequence` (default 1) to `to_sequence` (default: the last).
Result<json> read_channel_log_op(Hub& hub, const Params& params) {
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

const std::map<std::string, Op, std::less<>>& ops() {
  static const std::map<std::string, Op, std::less<>> table = {
      {"register", register_op},
      {"get_agent",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"name_or_id"}));
         PARLEY_TRY(name_or_id, params.text("name_or_id"));
         PARLEY_TRY(passport, hub.get_agent(name_or_id));
         return to_json(passport);
       }},
      {"get_resume",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(resume, hub.get_resume(agent_id));
         return to_json(resume);
       }},
      {"get_skill",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         auto skill = hub.get_skill(agent_id);
         return skill ? json(*skill) : json(nullptr);
       }},
      {"get_rule",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(rule, hub.get_rule(agent_id));
         return to_json(rule);
       }},
      {"find_agent_id",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"name"}));
         PARLEY_TRY(name, params.text("name"));
         auto id = hub.find_agent_id(name);
         return id ? json(*id) : json(nullptr);
       }},
      {"names_for",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_ids"}));
         PARLEY_TRY(ids, params.texts("agent_ids"));
         json out = json::object();
         for (const auto& id : ids) out[id] = hub.name_for(id);
         return out;
       }},
      {"list_agents", list_agents_op},
      {"set_resume",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id", "resume"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(resume_json, params.object("resume"));
         PARLEY_TRY(resume, resume_from_json(resume_json));
         return done(hub.set_resume(agent_id, std::move(resume)));
       }},
      {"set_skill",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id", "skill_md"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(skill_md, params.optional_text("skill_md"));
         return done(hub.set_skill(agent_id, std::move(skill_md)));
       }},
      {"set_rule",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id", "rule"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(rule_json, params.object("rule"));
         PARLEY_TRY(rule, rule_from_json(rule_json));
         return done(hub.set_rule(agent_id, std::move(rule)));
       }},
      {"unregister",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id"}));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         return done(hub.unregister(agent_id));
       }},
      {"record_observation",
       [](Hub& hub, const Params& params) -> Result<json> {
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
         return done(hub.record_observation(owner_id, capability, outcome,
                                            latency, std::move(task_id)));
       }},
      {"create_channel", create_channel_op},
      {"get_channel",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"channel_id"}));
         PARLEY_TRY(channel_id, params.text("channel_id"));
         PARLEY_TRY(metadata, hub.get_channel(channel_id));
         return to_json(metadata);
       }},
      {"list_channels",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"agent_id", "limit"}));
         PARLEY_TRY(agent_id, params.optional_text("agent_id"));
         PARLEY_TRY(limit, params.optional_integer("limit"));
         return list_json(hub.list_channels(
             agent_id ? std::optional<std::string_view>(*agent_id)
                      : std::nullopt,
             std::nullopt,
             static_cast<std::size_t>(
                 std::max<std::int64_t>(0, limit.value_or(50)))));
       }},
      {"close_channel",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"channel_id", "reason"}));
         PARLEY_TRY(channel_id, params.text("channel_id"));
         PARLEY_TRY(reason, params.optional_text("reason"));
         PARLEY_TRY(metadata,
                    hub.close_channel(channel_id, reason.value_or("")));
         return to_json(metadata);
       }},
      {"post_envelope", post_envelope_op},
      {"read_wal", read_wal_op},
      {"find_envelope_by_causation",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"channel_id", "sender_id", "causation_id"}));
         PARLEY_TRY(channel_id, params.text("channel_id"));
         PARLEY_TRY(sender_id, params.text("sender_id"));
         PARLEY_TRY(causation_id, params.text("causation_id"));
         PARLEY_TRY(envelope, hub.find_envelope_by_causation(
                                  channel_id, sender_id, causation_id));
         return envelope ? to_json(*envelope) : json(nullptr);
       }},
      {"can_send",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({"channel_id", "sender_id", "event_type"}));
         PARLEY_TRY(channel_id, params.text("channel_id"));
         PARLEY_TRY(sender_id, params.text("sender_id"));
         PARLEY_TRY(type, params.optional_text("event_type"));
         return json(hub.can_send(
             channel_id, sender_id,
             type ? std::optional<std::string_view>(*type) : std::nullopt));
       }},
      {"pending_turns_for",
       [](Hub& hub, const Params& params) -> Result<json> {
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
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(
             params.only({"channel_id", "agent_id", "envelope_id", "error"}));
         PARLEY_TRY(channel_id, params.text("channel_id"));
         PARLEY_TRY(agent_id, params.text("agent_id"));
         PARLEY_TRY(envelope_id, params.text("envelope_id"));
         PARLEY_TRY(error, params.optional_text("error"));
         return done(hub.report_turn_failure(channel_id, agent_id, envelope_id,
                                             error.value_or("")));
       }},
      {"read_channel_log", read_channel_log_op},
      // Parley's own: one expectation tick (spec §6.2) at the hub's clock.
      {"tick_expectations",
       [](Hub& hub, const Params& params) -> Result<json> {
         PARLEY_CHECK(params.only({}));
         PARLEY_TRY(fired, hub.tick_expectations());
         return json{{"fired", fired}};
       }},
  };
  return table;
}

}  // namespace

Result<json> ControlPlane::call(std::string_view op, const json& params) {
  auto it = ops().find(op);
  if (it == ops().end()) {
    return protocol_error("unknown control-plane op: '" + std::string(op) +
                          "'");
  }
  if (!params.is_object()) return invalid("params must be a JSON object");
  return it->second(hub_, Params(params));
}

}  // namespace parley::engine
