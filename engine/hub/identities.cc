#include "engine/hub/identities.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/base/flex_json.h"
#include "engine/base/ids.h"
#include "engine/base/input_limits.h"
#include "engine/hub/audit.h"
#include "engine/hub/listener_events.h"
#include "engine/json/records_json.h"
#include "engine/records/log_records.h"

namespace parley::engine {

namespace {

constexpr std::string_view kKinds[] = {"agent", "human", "remote_agent"};

bool is_terminal_outcome(std::string_view outcome) {
  return outcome == "completed" || outcome == "failed" ||
         outcome == "expired" || outcome == "cancelled";
}

std::unexpected<Error> not_registered(std::string_view agent_id) {
  return not_found("agent not registered: " + std::string(agent_id));
}

}  // namespace

Change<Passport> Identities::register_identity(
    Passport passport, Resume resume, std::optional<std::string> skill_md,
    std::optional<Rule> rule, std::vector<std::string> owners) {
  if (passport.kind &&
      std::ranges::find(kKinds, *passport.kind) == std::end(kKinds)) {
    return refused<Passport>(
        {ErrorKind::kInvalid,
         "Passport.kind must be one of ('agent', 'human', 'remote_agent') or "
         "None; got '" +
             *passport.kind + "'"});
  }
  if (auto checked = check_name("passport field 'name'", passport.name);
      !checked) {
    return refused<Passport>(checked.error());
  }
  if (passport.cost) {
    if (auto checked = check_json_text("passport field 'cost'", *passport.cost);
        !checked) {
      return refused<Passport>(checked.error());
    }
  }
  if (skill_md) {
    if (auto checked = check_text("skill_md", *skill_md); !checked) {
      return refused<Passport>(checked.error());
    }
  }
  if (!owners.empty() && passport.effective_kind() != "remote_agent") {
    return refused<Passport>(
        {ErrorKind::kInvalid, "only a remote_agent is registered with owners"});
  }
  std::ranges::sort(owners);
  owners.erase(std::unique(owners.begin(), owners.end()), owners.end());
  // A remote agent's scheme is a routing label, not a credential.
  if (passport.effective_kind() != "remote_agent") {
    if (auto valid = core_.auth->validate(passport); !valid) {
      return refused<Passport>(valid.error());
    }
    passport.auth.claim = "{}";  // credentials are never stored
  }
  return {
      [this, passport = std::move(passport), resume = std::move(resume),
       skill_md = std::move(skill_md), rule = std::move(rule),
       owners = std::move(owners)](Commit& batch) mutable -> Result<Passport> {
        const Registry& registry = core_.state.registry;
        if (has_id_shape(passport.name) || registry.find(passport.name)) {
          return protocol_error("name '" + passport.name +
                                "' is, or has the shape of, an agent id");
        }
        if (auto existing = registry.find_agent_id(passport.name)) {
          return protocol_error("name '" + passport.name +
                                "' already registered (agent_id=" + *existing +
                                "); unregister it before re-registering.");
        }
        passport.agent_id = new_id();
        passport.created_at = core_.now();
        AgentRecord agent{.passport = std::move(passport),
                          .resume = std::move(resume),
                          .rule = rule.value_or(Rule{}),
                          .skill_md = std::move(skill_md),
                          .owners = std::move(owners)};
        batch.add(agent_registered_record(agent));
        batch.add(audit_record({{"at", agent.passport.created_at},
                                {"kind", "agent_registered"},
                                {"agent_id", agent.agent_id()},
                                {"name", agent.passport.name}}));
        stage_agent_event(core_, batch, agent.agent_id(), "registered",
                          {{"passport", to_json(agent.passport)},
                           {"at", agent.passport.created_at}});
        return std::move(agent.passport);
      }};
}

Result<std::string> Identities::authenticate(
    std::string_view name, std::string_view scheme,
    std::string_view claim_json) const {
  std::optional<std::string> agent_id = reads_.find_agent_id(name);
  if (!agent_id) return not_found("unknown name: " + std::string(name));
  auto passport = reads_.get_agent(*agent_id);
  if (!passport) return not_found("unknown name: " + std::string(name));
  const auto claim = nlohmann::json::parse(claim_json, /*cb=*/nullptr,
                                           /*allow_exceptions=*/false);
  if (!claim.is_object()) {
    return fail(ErrorKind::kAuthFailed, "auth_claim must be a JSON object");
  }
  if (passport->effective_kind() == "remote_agent") {
    return fail(ErrorKind::kAuthFailed,
                "remote agent '" + std::string(name) +
                    "' re-attaches only alongside its owner");
  }
  auto adapter = core_.auth->find(scheme);
  if (!adapter) return std::unexpected(adapter.error());
  if (scheme != passport->auth.scheme) {
    return fail(ErrorKind::kAuthFailed,
                "auth scheme '" + std::string(scheme) + "' does not match '" +
                    std::string(name) + "''s registered scheme '" +
                    passport->auth.scheme + "'");
  }
  if (auto valid = (*adapter)->validate(*passport, claim.dump()); !valid) {
    return std::unexpected(valid.error());
  }
  return std::move(*agent_id);
}

Change<void> Identities::unregister(std::string agent_id) {
  return {
      [this, agent_id](Commit& batch) REQUIRES(core_.writer) -> Result<void> {
        const AgentRecord* agent = core_.staged_state().registry.find(agent_id);
        if (!agent) return not_registered(agent_id);
        const std::string at = core_.now();
        batch.add(agent_unregistered_record(agent_id));
        batch.add(audit_record({{"at", at},
                                {"kind", "agent_unregistered"},
                                {"agent_id", agent_id},
                                {"name", agent->passport.name}}));
        stage_agent_event(core_, batch, agent_id, "unregistered",
                          {{"name", agent->passport.name}, {"at", at}});
        return {};
      },
      [this, agent_id](const Commit&, const Result<void>& done, bool) {
        if (done) delivery_.forget(agent_id);
      }};
}

Change<void> Identities::set_resume(std::string agent_id, Resume resume) {
  return {[this, agent_id = std::move(agent_id), resume = std::move(resume)](
              Commit& batch) REQUIRES(core_.writer) mutable -> Result<void> {
    const AgentRecord* agent = core_.staged_state().registry.find(agent_id);
    if (!agent) return not_registered(agent_id);
    resume.last_updated = core_.now();
    resume.version = agent->resume.version + 1;
    batch.add(resume_set_record(agent_id, resume));
    batch.add(audit_record({{"at", resume.last_updated},
                            {"kind", "resume_set"},
                            {"source", "tenant"},
                            {"agent_id", agent_id},
                            {"version", resume.version}}));
    stage_agent_event(core_, batch, agent_id, "resume_set",
                      {{"resume", to_json(resume)},
                       {"version", resume.version},
                       {"at", resume.last_updated}});
    return {};
  }};
}

Change<void> Identities::set_skill(std::string agent_id,
                                   std::optional<std::string> skill_md) {
  if (skill_md) {
    if (auto checked = check_text("skill_md", *skill_md); !checked) {
      return refused<void>(checked.error());
    }
  }
  return {
      [this, agent_id = std::move(agent_id), skill_md = std::move(skill_md)](
          Commit& batch) REQUIRES(core_.writer) -> Result<void> {
        if (!core_.staged_state().registry.find(agent_id))
          return not_registered(agent_id);
        const std::string at = core_.now();
        batch.add(skill_set_record(agent_id, skill_md));
        batch.add(audit_record({{"at", at},
                                {"kind", "skill_set"},
                                {"agent_id", agent_id},
                                {"removed", !skill_md.has_value()}}));
        stage_agent_event(core_, batch, agent_id, "skill_set",
                          {{"removed", !skill_md.has_value()}, {"at", at}});
        return {};
      }};
}

Change<void> Identities::set_rule(std::string agent_id, Rule rule) {
  return {[this, agent_id = std::move(agent_id), rule = std::move(rule)](
              Commit& batch) REQUIRES(core_.writer) mutable -> Result<void> {
    const AgentRecord* agent = core_.staged_state().registry.find(agent_id);
    if (!agent) return not_registered(agent_id);
    rule.version = agent->rule.version + 1;
    const std::string at = core_.now();
    batch.add(rule_set_record(agent_id, rule));
    batch.add(audit_record({{"at", at},
                            {"kind", "rule_set"},
                            {"agent_id", agent_id},
                            {"version", rule.version}}));
    stage_agent_event(
        core_, batch, agent_id, "rule_set",
        {{"rule", to_json(rule)}, {"version", rule.version}, {"at", at}});
    return {};
  }};
}

Change<void> Identities::record_observation(
    std::string owner_id, std::string capability, std::string outcome,
    std::optional<double> latency_ms, std::optional<std::string> task_id) {
  if (auto checked = check_name("capability", capability); !checked) {
    return refused<void>(checked.error());
  }
  return {[=, this](Commit& batch) REQUIRES(core_.writer) -> Result<void> {
    if (!is_terminal_outcome(outcome)) return {};
    const AgentRecord* owner = core_.staged_state().registry.find(owner_id);
    if (!owner) return {};
    if (task_id && owner->observed_tasks.contains(*task_id)) return {};
    Resume resume = owner->resume;
    stage_observation(batch, owner_id, resume, capability, outcome, latency_ms,
                      task_id);
    return {};
  }};
}

void Identities::stage_observation(
    Commit& batch, std::string_view owner_id, Resume& resume,
    std::string_view capability, std::string_view outcome,
    std::optional<double> latency_ms,
    const std::optional<std::string>& task_id) const {
  ObservedStats& stats = resume.observed[std::string(capability)];
  ++stats.n;
  if (outcome == "completed") ++stats.completed;
  if (outcome == "failed") ++stats.failed;
  if (outcome == "expired") ++stats.expired;
  if (latency_ms) stats.p50_latency_ms = latency_ms;
  resume.last_updated = core_.now();
  ++resume.version;
  batch.add(observation_record(owner_id, resume, task_id));
  batch.add(audit_record({{"at", resume.last_updated},
                          {"kind", "resume_set"},
                          {"source", "observed"},
                          {"agent_id", owner_id},
                          {"version", resume.version},
                          {"capability", capability},
                          {"outcome", outcome}}));
  stage_agent_event(core_, batch, owner_id, "observation_recorded",
                    {{"resume", to_json(resume)},
                     {"version", resume.version},
                     {"capability", capability},
                     {"outcome", outcome},
                     {"at", resume.last_updated}});
}

Change<void> Identities::acknowledge(std::string recipient_id,
                                     std::string channel_id,
                                     std::string envelope_id,
                                     std::string status) {
  // Moved into the stage function, not copied: a server acknowledges
  // receipts by the thousand a second.
  return {[this, recipient_id = std::move(recipient_id),
           channel_id = std::move(channel_id),
           envelope_id = std::move(envelope_id), status = std::move(status)](
              Commit& batch) REQUIRES(core_.writer) -> Result<void> {
    if (status != "ack" || channel_id.empty() || envelope_id.empty()) {
      return {};
    }
    const AgentRecord* recipient =
        core_.staged_state().registry.find(recipient_id);
    if (!recipient) return {};
    auto cursor = recipient->cursors.find(channel_id);
    if (cursor != recipient->cursors.end() && envelope_id <= cursor->second) {
      return {};
    }
    batch.add(cursor_advanced_record(recipient_id, channel_id, envelope_id));
    return {};
  }};
}

Change<void> Identities::report_turn_failure(std::string channel_id,
                                             std::string agent_id,
                                             std::string envelope_id,
                                             std::string message) {
  if (auto checked = check_text("error", message); !checked) {
    return refused<void>(checked.error());
  }
  return {[=, this](Commit& batch) -> Result<void> {
    batch.add(audit_record({{"at", core_.now()},
                            {"kind", "turn_failed"},
                            {"channel_id", channel_id},
                            {"agent_id", agent_id},
                            {"envelope_id", envelope_id},
                            {"exc_type", "RuntimeError"},
                            {"exc_message", message}}));
    if (!core_.listeners.empty()) {
      batch.notify([=](HubListener& listener) {
        listener.on_turn_failed(channel_id, agent_id, envelope_id, message);
      });
    }
    return {};
  }};
}

Change<void> Identities::append_audit(std::string json_object) {
  if (auto checked = check_json_text("audit record", json_object); !checked) {
    return refused<void>(checked.error());
  }
  auto record =
      nlohmann::json::parse(json_object, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("at") ||
      !record["at"].is_string() || !record.contains("kind") ||
      !record["kind"].is_string()) {
    return refused<void>(
        {ErrorKind::kInvalid,
         "an audit record must be a JSON object with string 'at' and "
         "'kind'"});
  }
  if (auto flex = to_flex(record); !flex) return refused<void>(flex.error());
  std::string encoded = audit_record(record);
  return {[encoded = std::move(encoded)](Commit& batch) -> Result<void> {
    batch.add(encoded);
    return {};
  }};
}

}  // namespace parley::engine
