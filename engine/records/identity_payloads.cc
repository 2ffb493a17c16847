// Passport, resume and rule payloads (engine/records/payloads.h).
#include <cmath>
#include <variant>

#include "engine/base/flex_text.h"
#include "engine/records/payload_fields.h"
#include "engine/records/payloads.h"

namespace parley::engine {

namespace {

constexpr const char* kCostKeys[] = {"input_per_mtok", "output_per_mtok",
                                     "latency_tier"};

// The cost profile as the passport holds it: its three keys in AG2's
// declaration order (the payload's map holds them sorted).
void read_cost(PayloadReader& in, std::optional<JsonText>& cost) {
  cost.reset();
  const auto value = in.value("cost");
  if (!value) return;
  if (!value->IsMap()) return in.wrong_type("cost", "an object or null");
  const auto map = value->AsMap();
  JsonText text = "{";
  for (const char* key : kCostKeys) {
    if (text.size() > 1) text += ',';
    text += '"';
    text += key;
    text += "\":";
    if (!append_json_text(map[key], text)) {
      return in.wrong_type("cost", "JSON with UTF-8 text");
    }
  }
  text += '}';
  cost = std::move(text);
}

void read_duration(PayloadReader& in, const char* key, DurationSpec& out) {
  const auto value = in.value(key);
  if (!value) return;
  if (value->IsString()) {
    const auto text = value->AsString();
    out = std::string(text.c_str(), text.size());
  } else if (value->IsInt() || value->IsUInt()) {
    std::int64_t seconds = 0;
    in.integer(key, seconds);
    out = seconds;
  } else {
    in.wrong_type(key, "an integer or a string");
  }
}

void write_duration(PayloadWriter& out, const char* key,
                    const DurationSpec& duration) {
  if (const auto* seconds = std::get_if<std::int64_t>(&duration)) {
    out.integer(key, *seconds);
  } else {
    out.text(key, std::get<std::string>(duration));
  }
}

// A latency as AG2 stored it: integral values as integers.
void write_latency(PayloadWriter& out, const std::optional<double>& value) {
  auto& builder = out.builder();
  if (!value) {
    builder.Null("p50_latency_ms");
  } else if (std::isfinite(*value) && *value == std::trunc(*value) &&
             std::fabs(*value) < 9.0e15) {
    builder.Int("p50_latency_ms", static_cast<std::int64_t>(*value));
  } else {
    builder.Double("p50_latency_ms", *value);
  }
}

}  // namespace

Result<FlexBytes> encode_passport(const Passport& passport) {
  return write_payload([&](PayloadWriter& out) {
    out.text("name", passport.name);
    out.text("owner", passport.owner);
    out.text("provider", passport.provider);
    out.text("model", passport.model);
    out.json("cost", passport.cost);
    out.text("region", passport.region);
    out.object("auth", [&] {
      const AuthInfo& auth = passport.auth;
      out.text("scheme", auth.scheme);
      out.text("issuer", auth.issuer);
      out.text("audience", auth.audience);
      out.text("key_fingerprint", auth.key_fingerprint);
      out.json("claim", auth.claim);
    });
    out.text("kind", passport.kind);
    out.text("hub_id", passport.hub_id);
    out.integer("version", passport.version);
    out.text("agent_id", passport.agent_id);
    out.text("created_at", passport.created_at);
  });
}

Result<Passport> decode_passport(std::span<const std::uint8_t> payload) {
  return read_payload<Passport>(
      payload_root(payload), "passport",
      [](PayloadReader& in, Passport& passport) {
        in.text("name", passport.name, Presence::kRequired);
        in.text("owner", passport.owner);
        in.text("provider", passport.provider);
        in.text("model", passport.model);
        read_cost(in, passport.cost);
        in.text("region", passport.region);
        PayloadReader auth = in.object("auth");
        auth.text("scheme", passport.auth.scheme);
        auth.text("issuer", passport.auth.issuer);
        auth.text("audience", passport.auth.audience);
        auth.text("key_fingerprint", passport.auth.key_fingerprint);
        auth.json("claim", passport.auth.claim);
        in.text("kind", passport.kind);
        in.text("hub_id", passport.hub_id);
        in.integer("version", passport.version);
        in.text("agent_id", passport.agent_id);
        in.text("created_at", passport.created_at);
      });
}

Result<FlexBytes> encode_resume(const Resume& resume) {
  return write_payload([&](PayloadWriter& out) {
    out.text_list("claimed_capabilities", resume.claimed_capabilities);
    out.text_list("domains", resume.domains);
    out.text("summary", resume.summary);
    out.each("examples", resume.examples, [&](const ResumeExample& example) {
      out.text("title", example.title);
      out.text("outcome", example.outcome);
      out.text("task_id", example.task_id);
      out.text("channel_id", example.channel_id);
      out.text("when", example.when);
      out.text("note", example.note);
    });
    out.object("observed", [&] {
      // Not structured bindings: clang 14 cannot capture one in a lambda.
      for (const auto& entry : resume.observed) {
        const auto& stats = entry.second;
        out.object(entry.first.c_str(), [&] {
          out.integer("n", stats.n);
          out.integer("completed", stats.completed);
          out.integer("failed", stats.failed);
          out.integer("expired", stats.expired);
          write_latency(out, stats.p50_latency_ms);
        });
      }
    });
    out.integer("version", resume.version);
    out.text("last_updated", resume.last_updated);
  });
}

Result<Resume> decode_resume(std::span<const std::uint8_t> payload) {
  return decode_resume(payload_root(payload));
}

Result<Resume> decode_resume(flexbuffers::Reference payload) {
  return read_payload<Resume>(
      payload, "resume", [](PayloadReader& in, Resume& resume) {
        in.text_list("claimed_capabilities", resume.claimed_capabilities);
        in.text_list("domains", resume.domains);
        in.text("summary", resume.summary);
        in.each("examples", [&](PayloadReader item) {
          ResumeExample& example = resume.examples.emplace_back();
          item.text("title", example.title, Presence::kRequired);
          item.text("outcome", example.outcome);
          item.text("task_id", example.task_id);
          item.text("channel_id", example.channel_id);
          item.text("when", example.when);
          item.text("note", example.note);
        });
        in.each_entry("observed", [&](std::string_view capability,
                                      flexbuffers::Reference value) {
          ObservedStats& stats = resume.observed[std::string(capability)];
          PayloadReader item =
              in.nested(value, "resume.observed." + std::string(capability));
          item.integer("n", stats.n);
          item.integer("completed", stats.completed);
          item.integer("failed", stats.failed);
          item.integer("expired", stats.expired);
          item.number("p50_latency_ms", stats.p50_latency_ms);
        });
        in.integer("version", resume.version);
        in.text("last_updated", resume.last_updated);
      });
}

Result<FlexBytes> encode_rule(const Rule& rule) {
  return write_payload([&](PayloadWriter& out) {
    out.integer("version", rule.version);
    out.object("access", [&] {
      out.text_list("inbound_from", rule.access.inbound_from);
      out.text_list("outbound_to", rule.access.outbound_to);
      out.object("channel_types", [&] {
        out.text_list("initiate", rule.access.initiate_types);
        out.text_list("accept", rule.access.accept_types);
      });
    });
    const Rule::Limits& limits = rule.limits;
    out.object("limits", [&] {
      out.integer("max_concurrent_channels", limits.max_concurrent_channels);
      out.integer("max_concurrent_tasks", limits.max_concurrent_tasks);
      write_duration(out, "channel_ttl_default", limits.channel_ttl_default);
      write_duration(out, "task_ttl_default", limits.task_ttl_default);
      out.object("rate", [&] {
        out.integer("per_minute", limits.rate_per_minute);
        out.integer("burst", limits.rate_burst);
      });
      out.integer("delegation_depth", limits.delegation_depth);
      out.object("inbox", [&] {
        out.integer("max_pending", limits.inbox_max_pending);
        out.text("overflow", limits.inbox_overflow);
        out.integer("high_water", limits.inbox_high_water);
      });
    });
  });
}

Result<Rule> decode_rule(std::span<const std::uint8_t> payload) {
  return read_payload<Rule>(
      payload_root(payload), "rule", [](PayloadReader& in, Rule& rule) {
        in.integer("version", rule.version);
        PayloadReader access = in.object("access");
        access.text_list("inbound_from", rule.access.inbound_from);
        access.text_list("outbound_to", rule.access.outbound_to);
        PayloadReader types = access.object("channel_types");
        types.text_list("initiate", rule.access.initiate_types);
        types.text_list("accept", rule.access.accept_types);
        Rule::Limits& limits = rule.limits;
        PayloadReader l = in.object("limits");
        l.integer("max_concurrent_channels", limits.max_concurrent_channels);
        l.integer("max_concurrent_tasks", limits.max_concurrent_tasks);
        read_duration(l, "channel_ttl_default", limits.channel_ttl_default);
        read_duration(l, "task_ttl_default", limits.task_ttl_default);
        PayloadReader rate = l.object("rate");
        rate.integer("per_minute", limits.rate_per_minute);
        rate.integer("burst", limits.rate_burst);
        l.integer("delegation_depth", limits.delegation_depth);
        PayloadReader inbox = l.object("inbox");
        inbox.integer("max_pending", limits.inbox_max_pending);
        inbox.text("overflow", limits.inbox_overflow);
        inbox.integer("high_water", limits.inbox_high_water);
      });
}

}  // namespace parley::engine
