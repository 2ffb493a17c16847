#include "engine/json/records_json.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/flex_json.h"

namespace parley::engine {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kPassportKinds[] = {"agent", "human",
                                               "remote_agent"};
constexpr std::string_view kPriorities[] = {"background", "normal", "urgent"};
constexpr std::string_view kRoles[] = {"initiator", "respondent",
                                       "participant"};

template <std::size_t N>
bool one_of(std::string_view value, const std::string_view (&set)[N]) {
  return std::ranges::find(set, value) != std::end(set);
}

// Python's repr() of a str: single quotes unless the text holds a single
// quote and no double quote; control characters escaped.
std::string py_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      char buffer[5];
      std::snprintf(buffer, sizeof buffer, "\\x%02x", byte);
      out += buffer;
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

// Python's repr() of a decoded JSON value, for "got <x>" messages.
std::string py_value_repr(const Json& value) {
  if (value.is_string()) return py_repr(value.get_ref<const std::string&>());
  if (value.is_null()) return "None";
  if (value.is_boolean()) return value.get<bool>() ? "True" : "False";
  return value.dump();
}

bool read_int(const Json& value, std::int64_t& out) {
  if (value.is_number_unsigned()) {
    const auto number = value.get<std::uint64_t>();
    if (number >
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return false;
    }
    out = static_cast<std::int64_t>(number);
    return true;
  }
  if (value.is_number_integer()) {
    out = value.get<std::int64_t>();
    return true;
  }
  return false;
}

bool read_string_list(const Json& value, std::vector<std::string>& out) {
  if (!value.is_array()) return false;
  std::vector<std::string> items;
  items.reserve(value.size());
  for (const auto& item : value) {
    if (!item.is_string()) return false;
    items.push_back(item.get<std::string>());
  }
  out = std::move(items);
  return true;
}

// Reads one JSON object field by field. All readers of one record share
// `error`; once it is set every call is a no-op, so the first problem wins.
// `what` names the object in messages.
class Fields {
 public:
  Fields(std::optional<std::string>& error, const Json& value, std::string what)
      : error_(error), value_(value), what_(std::move(what)) {
    if (!value_.is_object()) fail(what_ + " must be a JSON object");
  }

  bool failed() const { return error_.has_value(); }

  void fail(std::string message) {
    if (!error_) error_ = std::move(message);
  }

  // Fails on the first key (in the object's order) not in `known`.
  void allow(std::initializer_list<std::string_view> known) {
    if (failed()) return;
    for (const auto& [key, unused] : value_.items()) {
      if (std::ranges::find(known, std::string_view(key)) == known.end()) {
        fail(what_ + " has unknown key " + py_repr(key));
        return;
      }
    }
  }

  // The field, or nullptr when absent (a failure when `required`).
  const Json* get(std::string_view key, bool required = false) {
    if (failed()) return nullptr;
    auto it = value_.find(key);
    if (it == value_.end()) {
      if (required) fail(what_ + " is missing required key " + py_repr(key));
      return nullptr;
    }
    return &*it;
  }

  void type_error(std::string_view key, std::string_view expected) {
    fail(what_ + " field '" + std::string(key) + "' must be " +
         std::string(expected));
  }

  // A nested object: present and an object, else nullptr (a failure when
  // present with another type, or absent and `required`).
  const Json* object(std::string_view key, bool required = false) {
    const Json* field = get(key, required);
    if (field && !field->is_object()) {
      type_error(key, "a JSON object");
      return nullptr;
    }
    return field;
  }

  // Name of a nested object for its own Fields.
  std::string path(std::string_view key) const {
    return what_ + "." + std::string(key);
  }

  void string(std::string_view key, std::string& out, bool required = false) {
    if (const Json* field = get(key, required)) {
      if (field->is_string()) {
        out = field->get<std::string>();
      } else {
        type_error(key, "a string");
      }
    }
  }

  void optional_string(std::string_view key, std::optional<std::string>& out,
                       bool required = false) {
    if (const Json* field = get(key, required)) {
      if (field->is_null()) {
        out.reset();
      } else if (field->is_string()) {
        out = field->get<std::string>();
      } else {
        type_error(key, "a string or null");
      }
    }
  }

  void integer(std::string_view key, std::int64_t& out, bool required = false) {
    if (const Json* field = get(key, required)) {
      if (!read_int(*field, out)) type_error(key, "an integer");
    }
  }

  void optional_integer(std::string_view key,
                        std::optional<std::int64_t>& out) {
    if (const Json* field = get(key)) {
      std::int64_t number = 0;
      if (field->is_null()) {
        out.reset();
      } else if (read_int(*field, number)) {
        out = number;
      } else {
        type_error(key, "an integer or null");
      }
    }
  }

  void optional_number(std::string_view key, std::optional<double>& out) {
    if (const Json* field = get(key)) {
      if (field->is_null()) {
        out.reset();
      } else if (field->is_number()) {
        out = field->get<double>();
      } else {
        type_error(key, "a number or null");
      }
    }
  }

  void string_list(std::string_view key, std::vector<std::string>& out) {
    if (const Json* field = get(key)) {
      if (!read_string_list(*field, out)) type_error(key, "a list of strings");
    }
  }

  void optional_string_list(std::string_view key,
                            std::optional<std::vector<std::string>>& out,
                            bool required = false) {
    if (const Json* field = get(key, required)) {
      std::vector<std::string> items;
      if (field->is_null()) {
        out.reset();
      } else if (read_string_list(*field, items)) {
        out = std::move(items);
      } else {
        type_error(key, "a list of strings or null");
      }
    }
  }

  // A free-form JSON object kept as compact text.
  void object_text(std::string_view key, JsonText& out) {
    if (const Json* field = object(key)) out = field->dump();
  }

  void duration(std::string_view key, DurationSpec& out) {
    if (const Json* field = get(key)) {
      std::int64_t seconds = 0;
      if (read_int(*field, seconds)) {
        out = seconds;
      } else if (field->is_string()) {
        out = field->get<std::string>();
      } else {
        type_error(key, "an integer or a string");
      }
    }
  }

 private:
  std::optional<std::string>& error_;
  const Json& value_;
  std::string what_;
};

template <typename T>
Result<T> finish(const std::optional<std::string>& error, T record) {
  if (error) return invalid(*error);
  return record;
}

// ---------------------------------------------------------------------------
// Readers. Each takes the shared error slot; the caller checks it.

void read_auth(std::optional<std::string>& error, const Json& value,
               std::string what, AuthInfo& auth) {
  Fields f(error, value, std::move(what));
  f.allow({"scheme", "issuer", "audience", "key_fingerprint", "claim"});
  f.string("scheme", auth.scheme);
  f.optional_string("issuer", auth.issuer);
  f.optional_string("audience", auth.audience);
  f.optional_string("key_fingerprint", auth.key_fingerprint);
  f.object_text("claim", auth.claim);
}

// AG2's CostProfile, normalised to all three keys in declaration order.
void read_cost(std::optional<std::string>& error, const Json& value,
               std::string what, JsonText& cost) {
  Fields f(error, value, std::move(what));
  f.allow({"input_per_mtok", "output_per_mtok", "latency_tier"});
  OrderedJson out = OrderedJson::object();
  for (std::string_view key : {"input_per_mtok", "output_per_mtok"}) {
    const Json* field = f.get(key);
    if (!field || field->is_null()) {
      out[std::string(key)] = nullptr;
    } else if (field->is_number()) {
      out[std::string(key)] = OrderedJson(*field);
    } else {
      f.type_error(key, "a number or null");
    }
  }
  std::optional<std::string> tier;
  f.optional_string("latency_tier", tier);
  out["latency_tier"] = tier ? OrderedJson(*tier) : OrderedJson(nullptr);
  cost = out.dump();
}

void read_passport(std::optional<std::string>& error, const Json& value,
                   Passport& passport) {
  Fields f(error, value, "passport");
  f.allow({"name", "owner", "provider", "model", "cost", "region", "auth",
           "kind", "hub_id", "version", "agent_id", "created_at"});
  f.string("name", passport.name, /*required=*/true);
  f.string("owner", passport.owner);
  f.optional_string("provider", passport.provider);
  f.optional_string("model", passport.model);
  if (const Json* cost = f.get("cost")) {
    if (cost->is_null()) {
      passport.cost.reset();
    } else if (cost->is_object()) {
      passport.cost.emplace();
      read_cost(error, *cost, f.path("cost"), *passport.cost);
    } else {
      f.type_error("cost", "a JSON object or null");
    }
  }
  f.optional_string("region", passport.region);
  if (const Json* auth = f.object("auth")) {
    read_auth(error, *auth, f.path("auth"), passport.auth);
  }
  if (const Json* kind = f.get("kind")) {
    if (kind->is_null()) {
      passport.kind.reset();
    } else if (kind->is_string() &&
               one_of(kind->get_ref<const std::string&>(), kPassportKinds)) {
      passport.kind = kind->get<std::string>();
    } else {
      f.fail(
          "Passport.kind must be one of ('agent', 'human', 'remote_agent') "
          "or None; got " +
          py_value_repr(*kind));
    }
  }
  f.optional_string("hub_id", passport.hub_id);
  f.integer("version", passport.version);
  f.optional_string("agent_id", passport.agent_id);
  f.string("created_at", passport.created_at);
}

void read_example(std::optional<std::string>& error, const Json& value,
                  std::string what, ResumeExample& example) {
  Fields f(error, value, std::move(what));
  f.allow({"title", "outcome", "task_id", "channel_id", "when", "note"});
  f.string("title", example.title, /*required=*/true);
  f.string("outcome", example.outcome);
  f.optional_string("task_id", example.task_id);
  f.optional_string("channel_id", example.channel_id);
  f.optional_string("when", example.when);
  f.string("note", example.note);
}

void read_observed(std::optional<std::string>& error, const Json& value,
                   std::string what, ObservedStats& stats) {
  Fields f(error, value, std::move(what));
  f.allow({"n", "completed", "failed", "expired", "p50_latency_ms"});
  f.integer("n", stats.n);
  f.integer("completed", stats.completed);
  f.integer("failed", stats.failed);
  f.integer("expired", stats.expired);
  f.optional_number("p50_latency_ms", stats.p50_latency_ms);
}

void read_resume(std::optional<std::string>& error, const Json& value,
                 Resume& resume) {
  Fields f(error, value, "resume");
  f.allow({"claimed_capabilities", "domains", "summary", "examples", "observed",
           "version", "last_updated"});
  f.string_list("claimed_capabilities", resume.claimed_capabilities);
  f.string_list("domains", resume.domains);
  f.string("summary", resume.summary);
  if (const Json* examples = f.get("examples")) {
    if (!examples->is_array()) {
      f.type_error("examples", "a list");
    } else {
      resume.examples.clear();
      for (std::size_t i = 0; i < examples->size() && !f.failed(); ++i) {
        read_example(error, (*examples)[i],
                     "resume.examples[" + std::to_string(i) + "]",
                     resume.examples.emplace_back());
      }
    }
  }
  if (const Json* observed = f.object("observed")) {
    resume.observed.clear();
    for (const auto& [capability, stats] : observed->items()) {
      if (f.failed()) break;
      read_observed(error, stats,
                    "resume.observed[" + py_repr(capability) + "]",
                    resume.observed[capability]);
    }
  }
  f.integer("version", resume.version);
  f.string("last_updated", resume.last_updated);
}

void read_rule(std::optional<std::string>& error, const Json& value,
               Rule& rule) {
  Fields f(error, value, "rule");
  f.allow({"version", "access", "limits"});
  f.integer("version", rule.version);
  if (const Json* access_json = f.object("access")) {
    auto& access = rule.access;
    Fields a(error, *access_json, f.path("access"));
    a.allow({"inbound_from", "outbound_to", "channel_types"});
    a.string_list("inbound_from", access.inbound_from);
    a.string_list("outbound_to", access.outbound_to);
    if (const Json* types = a.object("channel_types")) {
      Fields t(error, *types, a.path("channel_types"));
      t.allow({"initiate", "accept"});
      t.string_list("initiate", access.initiate_types);
      t.string_list("accept", access.accept_types);
    }
  }
  if (const Json* limits_json = f.object("limits")) {
    auto& limits = rule.limits;
    Fields l(error, *limits_json, f.path("limits"));
    l.allow({"max_concurrent_channels", "max_concurrent_tasks",
             "channel_ttl_default", "task_ttl_default", "rate",
             "delegation_depth", "inbox"});
    l.integer("max_concurrent_channels", limits.max_concurrent_channels);
    l.integer("max_concurrent_tasks", limits.max_concurrent_tasks);
    l.duration("channel_ttl_default", limits.channel_ttl_default);
    l.duration("task_ttl_default", limits.task_ttl_default);
    if (const Json* rate = l.object("rate")) {
      Fields r(error, *rate, l.path("rate"));
      r.allow({"per_minute", "burst"});
      r.integer("per_minute", limits.rate_per_minute);
      r.integer("burst", limits.rate_burst);
    }
    l.integer("delegation_depth", limits.delegation_depth);
    if (const Json* inbox = l.object("inbox")) {
      Fields i(error, *inbox, l.path("inbox"));
      i.allow({"max_pending", "overflow", "high_water"});
      i.integer("max_pending", limits.inbox_max_pending);
      i.string("overflow", limits.inbox_overflow);
      i.optional_integer("high_water", limits.inbox_high_water);
    }
  }
}

void read_expectation(std::optional<std::string>& error, const Json& value,
                      std::string what, ExpectationSpec& spec) {
  Fields f(error, value, std::move(what));
  f.allow({"name", "on_violation", "params", "applies_to"});
  f.string("name", spec.name, /*required=*/true);
  f.string("on_violation", spec.on_violation, /*required=*/true);
  f.object_text("params", spec.params);
  std::optional<std::vector<std::string>> applies_to;
  f.optional_string_list("applies_to", applies_to);
  if (applies_to) {
    spec.applies_to = Json(*applies_to).dump();
  } else {
    spec.applies_to.reset();
  }
}

void read_manifest(std::optional<std::string>& error, const Json& value,
                   std::string what, ChannelManifest& manifest) {
  Fields f(error, value, std::move(what));
  f.allow({"type", "version", "participants", "knobs_schema",
           "default_view_policy", "expectations"});
  f.string("type", manifest.type, /*required=*/true);
  f.integer("version", manifest.version);
  if (const Json* participants = f.object("participants")) {
    auto& schema = manifest.participants;
    Fields p(error, *participants, f.path("participants"));
    p.allow({"min", "max", "roles"});
    p.integer("min", schema.min, /*required=*/true);
    p.optional_integer("max", schema.max);
    p.string_list("roles", schema.roles);
  }
  if (const Json* knobs_schema = f.object("knobs_schema")) {
    manifest.knobs_schema.clear();
    for (const auto& [name, hint] : knobs_schema->items()) {
      if (!hint.is_string()) {
        f.fail(f.path("knobs_schema") + " field " + py_repr(name) +
               " must be a string");
        break;
      }
      manifest.knobs_schema.emplace_back(name, hint.get<std::string>());
    }
  }
  f.string("default_view_policy", manifest.default_view_policy);
  if (const Json* expectations = f.get("expectations")) {
    if (!expectations->is_array()) {
      f.type_error("expectations", "a list");
    } else {
      manifest.expectations.clear();
      for (std::size_t i = 0; i < expectations->size() && !f.failed(); ++i) {
        read_expectation(error, (*expectations)[i],
                         f.path("expectations") + "[" + std::to_string(i) + "]",
                         manifest.expectations.emplace_back());
      }
    }
  }
}

void read_participant(std::optional<std::string>& error, const Json& value,
                      std::string what, Participant& participant) {
  Fields f(error, value, std::move(what));
  f.allow({"agent_id", "role", "order", "joined_at"});
  f.string("agent_id", participant.agent_id, /*required=*/true);
  f.string("role", participant.role, /*required=*/true);
  if (!f.failed() && !one_of(participant.role, kRoles)) {
    f.fail(py_repr(participant.role) + " is not a valid ParticipantRole");
  }
  f.integer("order", participant.order, /*required=*/true);
  f.string("joined_at", participant.joined_at);
}

void read_metadata(std::optional<std::string>& error, const Json& value,
                   ChannelMetadata& metadata) {
  Fields f(error, value, "metadata");
  f.allow({"channel_id", "manifest", "creator_id", "participants", "state",
           "created_at", "expires_at", "closed_at", "close_reason",
           "parent_channel_id", "knobs", "labels", "required_acks",
           "pending_acks", "rejected_by"});
  f.string("channel_id", metadata.channel_id, /*required=*/true);
  if (const Json* manifest = f.object("manifest", /*required=*/true)) {
    read_manifest(error, *manifest, f.path("manifest"), metadata.manifest);
  }
  f.string("creator_id", metadata.creator_id, /*required=*/true);
  if (const Json* participants = f.get("participants", /*required=*/true)) {
    if (!participants->is_array()) {
      f.type_error("participants", "a list");
    } else {
      for (std::size_t i = 0; i < participants->size() && !f.failed(); ++i) {
        read_participant(error, (*participants)[i],
                         f.path("participants") + "[" + std::to_string(i) + "]",
                         metadata.participants.emplace_back());
      }
    }
  }
  std::string state;
  f.string("state", state, /*required=*/true);
  if (!f.failed()) {
    if (auto parsed = channel_state_from(state)) {
      metadata.state = *parsed;
    } else {
      f.fail(py_repr(state) + " is not a valid ChannelState");
    }
  }
  f.string("created_at", metadata.created_at, /*required=*/true);
  f.optional_string("expires_at", metadata.expires_at);
  f.optional_string("closed_at", metadata.closed_at);
  f.string("close_reason", metadata.close_reason);
  f.optional_string("parent_channel_id", metadata.parent_channel_id);
  f.object_text("knobs", metadata.knobs);
  f.object_text("labels", metadata.labels);
  f.optional_integer("required_acks", metadata.required_acks);
  f.string_list("pending_acks", metadata.pending_acks);
  f.string_list("rejected_by", metadata.rejected_by);
}

void read_envelope(std::optional<std::string>& error, const Json& value,
                   Envelope& envelope) {
  Fields f(error, value, "envelope");
  f.allow({"channel_id", "sender_id", "audience", "event_type", "event_data",
           "envelope_id", "task_id", "causation_id", "trace_id", "priority",
           "depth", "idempotency_key", "created_at", "ttl_seconds"});
  f.string("channel_id", envelope.channel_id, /*required=*/true);
  f.string("sender_id", envelope.sender_id, /*required=*/true);
  f.optional_string_list("audience", envelope.audience, /*required=*/true);
  f.string("event_type", envelope.event_type, /*required=*/true);
  if (const Json* data = f.object("event_data", /*required=*/true)) {
    if (auto flex = to_flex(*data)) {
      envelope.event_data = std::move(*flex);
    } else {
      f.fail("envelope field 'event_data': " + flex.error().message);
    }
  }
  f.string("envelope_id", envelope.envelope_id);
  f.optional_string("task_id", envelope.task_id);
  f.optional_string("causation_id", envelope.causation_id);
  f.optional_string("trace_id", envelope.trace_id);
  if (const Json* priority = f.get("priority")) {
    if (priority->is_string() &&
        one_of(priority->get_ref<const std::string&>(), kPriorities)) {
      envelope.priority = priority->get<std::string>();
    } else {
      f.fail(
          "priority must be one of ['background', 'normal', 'urgent'], got " +
          py_value_repr(*priority));
    }
  }
  f.integer("depth", envelope.depth);
  f.optional_string("idempotency_key", envelope.idempotency_key);
  f.string("created_at", envelope.created_at);
  f.optional_integer("ttl_seconds", envelope.ttl_seconds);
}

// ---------------------------------------------------------------------------
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

Result<Passport> passport_from_json(const Json& value) {
  std::optional<std::string> error;
  Passport passport;
  read_passport(error, value, passport);
  return finish(error, std::move(passport));
}

Result<Resume> resume_from_json(const Json& value) {
  std::optional<std::string> error;
  Resume resume;
  read_resume(error, value, resume);
  return finish(error, std::move(resume));
}

Result<Rule> rule_from_json(const Json& value) {
  std::optional<std::string> error;
  Rule rule;
  read_rule(error, value, rule);
  return finish(error, std::move(rule));
}

Result<ChannelManifest> channel_manifest_from_json(const Json& value) {
  std::optional<std::string> error;
  ChannelManifest manifest;
  read_manifest(error, value, "manifest", manifest);
  return finish(error, std::move(manifest));
}

Result<ChannelMetadata> channel_metadata_from_json(const Json& value) {
  std::optional<std::string> error;
  ChannelMetadata metadata;
  read_metadata(error, value, metadata);
  return finish(error, std::move(metadata));
}

Result<Envelope> envelope_from_json(const Json& value) {
  std::optional<std::string> error;
  Envelope envelope;
  read_envelope(error, value, envelope);
  return finish(error, std::move(envelope));
}

std::string dump_compact(const Json& value) { return value.dump(); }

}  // namespace parley::engine
