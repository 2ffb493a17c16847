// The readers of engine/json/records_json.h: AG2's JSON shapes parsed
// strictly into the engine's records.
#include "engine/json/records_json.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/flex_json.h"
#include "engine/base/python_repr.h"

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
        fail(what_ + " has unknown key " + python_repr(key));
        return;
      }
    }
  }

  // The field, or nullptr when absent (a failure when `required`).
  const Json* get(std::string_view key, bool required = false) {
    if (failed()) return nullptr;
    auto it = value_.find(key);
    if (it == value_.end()) {
      if (required)
        fail(what_ + " is missing required key " + python_repr(key));
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
          python_repr_json(*kind));
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
                    "resume.observed[" + python_repr(capability) + "]",
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
        f.fail(f.path("knobs_schema") + " field " + python_repr(name) +
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
    f.fail(python_repr(participant.role) + " is not a valid ParticipantRole");
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
      f.fail(python_repr(state) + " is not a valid ChannelState");
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
          python_repr_json(*priority));
    }
  }
  f.integer("depth", envelope.depth);
  f.optional_string("idempotency_key", envelope.idempotency_key);
  f.string("created_at", envelope.created_at);
  f.optional_integer("ttl_seconds", envelope.ttl_seconds);
}

}  // namespace

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

}  // namespace parley::engine
