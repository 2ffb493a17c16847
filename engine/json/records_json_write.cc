// The writers of engine/json/records_json.h: AG2's JSON shapes of the
// engine's records.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/base/flex_json.h"
#include "engine/json/records_json.h"

namespace parley::engine {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

// Writers, generic over the JSON flavour J (Json sorts keys, OrderedJson
// keeps insertion = declaration order).

template <typename J>
J optional_value(const std::optional<std::string>& value) {
  return value ? J(*value) : J(nullptr);
}

template <typename J>
J optional_value(const std::optional<std::int64_t>& value) {
  return value ? J(*value) : J(nullptr);
}

template <typename J>
J list(const std::vector<std::string>& items) {
  J out = J::array();
  for (const auto& item : items) out.push_back(item);
  return out;
}

template <typename J>
J embedded(const JsonText& text) {
  return J::parse(text);
}

template <typename J>
J duration_value(const DurationSpec& duration) {
  if (const auto* seconds = std::get_if<std::int64_t>(&duration)) {
    return J(*seconds);
  }
  return J(std::get<std::string>(duration));
}

// Integral values print as integers (AG2 stores what the caller passed,
// typically an int of milliseconds).
template <typename J>
J latency_value(const std::optional<double>& value) {
  if (!value) return J(nullptr);
  const double v = *value;
  if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9.0e15) {
    return J(static_cast<std::int64_t>(v));
  }
  return J(v);
}

template <typename J>
J write_passport(const Passport& passport) {
  J out = J::object();
  out["name"] = passport.name;
  out["owner"] = passport.owner;
  out["provider"] = optional_value<J>(passport.provider);
  out["model"] = optional_value<J>(passport.model);
  out["cost"] = passport.cost ? embedded<J>(*passport.cost) : J(nullptr);
  out["region"] = optional_value<J>(passport.region);
  J auth = J::object();
  auth["scheme"] = passport.auth.scheme;
  auth["issuer"] = optional_value<J>(passport.auth.issuer);
  auth["audience"] = optional_value<J>(passport.auth.audience);
  auth["key_fingerprint"] = optional_value<J>(passport.auth.key_fingerprint);
  auth["claim"] = embedded<J>(passport.auth.claim);
  out["auth"] = std::move(auth);
  out["kind"] = optional_value<J>(passport.kind);
  out["hub_id"] = optional_value<J>(passport.hub_id);
  out["version"] = passport.version;
  out["agent_id"] = optional_value<J>(passport.agent_id);
  out["created_at"] = passport.created_at;
  return out;
}

template <typename J>
J write_resume(const Resume& resume) {
  J out = J::object();
  out["claimed_capabilities"] = list<J>(resume.claimed_capabilities);
  out["domains"] = list<J>(resume.domains);
  out["summary"] = resume.summary;
  J examples = J::array();
  for (const auto& example : resume.examples) {
    J item = J::object();
    item["title"] = example.title;
    item["outcome"] = example.outcome;
    item["task_id"] = optional_value<J>(example.task_id);
    item["channel_id"] = optional_value<J>(example.channel_id);
    item["when"] = optional_value<J>(example.when);
    item["note"] = example.note;
    examples.push_back(std::move(item));
  }
  out["examples"] = std::move(examples);
  J observed = J::object();
  for (const auto& [capability, stats] : resume.observed) {
    J item = J::object();
    item["n"] = stats.n;
    item["completed"] = stats.completed;
    item["failed"] = stats.failed;
    item["expired"] = stats.expired;
    item["p50_latency_ms"] = latency_value<J>(stats.p50_latency_ms);
    observed[capability] = std::move(item);
  }
  out["observed"] = std::move(observed);
  out["version"] = resume.version;
  out["last_updated"] = resume.last_updated;
  return out;
}

template <typename J>
J write_rule(const Rule& rule) {
  J out = J::object();
  out["version"] = rule.version;
  J access = J::object();
  access["inbound_from"] = list<J>(rule.access.inbound_from);
  access["outbound_to"] = list<J>(rule.access.outbound_to);
  J types = J::object();
  types["initiate"] = list<J>(rule.access.initiate_types);
  types["accept"] = list<J>(rule.access.accept_types);
  access["channel_types"] = std::move(types);
  out["access"] = std::move(access);
  const auto& l = rule.limits;
  J limits = J::object();
  limits["max_concurrent_channels"] = l.max_concurrent_channels;
  limits["max_concurrent_tasks"] = l.max_concurrent_tasks;
  limits["channel_ttl_default"] = duration_value<J>(l.channel_ttl_default);
  limits["task_ttl_default"] = duration_value<J>(l.task_ttl_default);
  J rate = J::object();
  rate["per_minute"] = l.rate_per_minute;
  rate["burst"] = l.rate_burst;
  limits["rate"] = std::move(rate);
  limits["delegation_depth"] = l.delegation_depth;
  J inbox = J::object();
  inbox["max_pending"] = l.inbox_max_pending;
  inbox["overflow"] = l.inbox_overflow;
  inbox["high_water"] = optional_value<J>(l.inbox_high_water);
  limits["inbox"] = std::move(inbox);
  out["limits"] = std::move(limits);
  return out;
}

template <typename J>
J write_manifest(const ChannelManifest& manifest) {
  J out = J::object();
  out["type"] = manifest.type;
  out["version"] = manifest.version;
  J participants = J::object();
  participants["min"] = manifest.participants.min;
  participants["max"] = optional_value<J>(manifest.participants.max);
  participants["roles"] = list<J>(manifest.participants.roles);
  out["participants"] = std::move(participants);
  J knobs_schema = J::object();
  for (const auto& [name, hint] : manifest.knobs_schema) {
    knobs_schema[name] = hint;
  }
  out["knobs_schema"] = std::move(knobs_schema);
  out["default_view_policy"] = manifest.default_view_policy;
  J expectations = J::array();
  for (const auto& spec : manifest.expectations) {
    J item = J::object();
    item["name"] = spec.name;
    item["on_violation"] = spec.on_violation;
    item["params"] = embedded<J>(spec.params);
    item["applies_to"] =
        spec.applies_to ? embedded<J>(*spec.applies_to) : J(nullptr);
    expectations.push_back(std::move(item));
  }
  out["expectations"] = std::move(expectations);
  return out;
}

template <typename J>
J write_metadata(const ChannelMetadata& metadata) {
  J out = J::object();
  out["channel_id"] = metadata.channel_id;
  out["manifest"] = write_manifest<J>(metadata.manifest);
  out["creator_id"] = metadata.creator_id;
  J participants = J::array();
  for (const auto& participant : metadata.participants) {
    J item = J::object();
    item["agent_id"] = participant.agent_id;
    item["role"] = participant.role;
    item["order"] = participant.order;
    item["joined_at"] = participant.joined_at;
    participants.push_back(std::move(item));
  }
  out["participants"] = std::move(participants);
  out["state"] = std::string(to_string(metadata.state));
  out["created_at"] = metadata.created_at;
  out["expires_at"] = optional_value<J>(metadata.expires_at);
  out["closed_at"] = optional_value<J>(metadata.closed_at);
  out["close_reason"] = metadata.close_reason;
  out["parent_channel_id"] = optional_value<J>(metadata.parent_channel_id);
  out["knobs"] = embedded<J>(metadata.knobs);
  out["labels"] = embedded<J>(metadata.labels);
  out["required_acks"] = optional_value<J>(metadata.required_acks);
  out["pending_acks"] = list<J>(metadata.pending_acks);
  out["rejected_by"] = list<J>(metadata.rejected_by);
  return out;
}

template <typename J>
J write_envelope(const Envelope& envelope) {
  J out = J::object();
  out["channel_id"] = envelope.channel_id;
  out["sender_id"] = envelope.sender_id;
  out["audience"] =
      envelope.audience ? list<J>(*envelope.audience) : J(nullptr);
  out["event_type"] = envelope.event_type;
  // An envelope that never held data (default-constructed) prints {}.
  out["event_data"] = envelope.event_data.empty()
                          ? J::object()
                          : J(flex_to_json(envelope.event_data));
  out["envelope_id"] = envelope.envelope_id;
  out["task_id"] = optional_value<J>(envelope.task_id);
  out["causation_id"] = optional_value<J>(envelope.causation_id);
  out["trace_id"] = optional_value<J>(envelope.trace_id);
  out["priority"] = envelope.priority;
  out["depth"] = envelope.depth;
  out["idempotency_key"] = optional_value<J>(envelope.idempotency_key);
  out["created_at"] = envelope.created_at;
  out["ttl_seconds"] = optional_value<J>(envelope.ttl_seconds);
  return out;
}

}  // namespace

Json to_json(const Passport& passport) {
  return write_passport<Json>(passport);
}
Json to_json(const Resume& resume) { return write_resume<Json>(resume); }
Json to_json(const Rule& rule) { return write_rule<Json>(rule); }
Json to_json(const ChannelManifest& manifest) {
  return write_manifest<Json>(manifest);
}
Json to_json(const ChannelMetadata& metadata) {
  return write_metadata<Json>(metadata);
}
Json to_json(const Envelope& envelope) {
  return write_envelope<Json>(envelope);
}
Json envelope_to_json(const Envelope& envelope) {
  return write_envelope<Json>(envelope);
}

OrderedJson to_ordered_json(const Passport& passport) {
  return write_passport<OrderedJson>(passport);
}
OrderedJson to_ordered_json(const Resume& resume) {
  return write_resume<OrderedJson>(resume);
}
OrderedJson to_ordered_json(const Rule& rule) {
  return write_rule<OrderedJson>(rule);
}
OrderedJson to_ordered_json(const ChannelManifest& manifest) {
  return write_manifest<OrderedJson>(manifest);
}
OrderedJson to_ordered_json(const ChannelMetadata& metadata) {
  return write_metadata<OrderedJson>(metadata);
}
OrderedJson to_ordered_json(const Envelope& envelope) {
  return write_envelope<OrderedJson>(envelope);
}

std::string dump_compact(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace parley::engine
