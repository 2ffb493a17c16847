// Identity mutations (spec §3.2-§3.4, §8.6): validate against the folded
// registry, then commit the record and its audit record as one batch.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "engine/base/ids.h"
#include "engine/base/input_limits.h"
#include "engine/hub/hub.h"
#include "engine/hub/hub_commit.h"
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

Result<Passport> Hub::register_identity(Passport passport, Resume resume,
                                        std::optional<std::string> skill_md,
                                        std::optional<Rule> rule,
                                        std::vector<std::string> owners) {
  if (passport.kind &&
      std::ranges::find(kKinds, *passport.kind) == std::end(kKinds)) {
    return invalid(
        "Passport.kind must be one of ('agent', 'human', 'remote_agent') or "
        "None; got '" +
        *passport.kind + "'");
  }
  if (auto checked = check_name("passport field 'name'", passport.name);
      !checked) {
    return std::unexpected(checked.error());
  }
  if (skill_md) {
    if (auto checked = check_text("skill_md", *skill_md); !checked) {
      return std::unexpected(checked.error());
    }
  }
  if (!owners.empty() && passport.effective_kind() != "remote_agent") {
    return invalid("only a remote_agent is registered with owners");
  }
  std::ranges::sort(owners);
  owners.erase(std::ranges::unique(owners).begin(), owners.end());
  if (passport.effective_kind() != "remote_agent") {
    if (auto valid = auth_->validate(passport); !valid) {
      return std::unexpected(valid.error());
    }
    passport.auth.claim = "{}";  // credentials are never stored (ADR 0021)
  }
  auto writer = lock_writer();
  const Registry& registry = state_.registry;
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
  passport.created_at = now();
  AgentRecord agent{.passport = std::move(passport),
                    .resume = std::move(resume),
                    .rule = rule.value_or(Rule{}),
                    .skill_md = std::move(skill_md),
                    .owners = std::move(owners)};
  Commit batch;
  batch.add(agent_registered_record(agent));
  batch.add(audit_record({{"at", agent.passport.created_at},
                          {"kind", "agent_registered"},
                          {"agent_id", agent.agent_id()},
                          {"name", agent.passport.name}}));
  stage_agent_event(batch, agent.agent_id(), "registered",
                    {{"passport", to_json(agent.passport)},
                     {"at", agent.passport.created_at}});
  if (auto committed = commit(batch, writer); !committed) {
    return std::unexpected(committed.error());
  }
  publish(batch);
  return agent.passport;
}

Result<std::string> Hub::authenticate(std::string_view name,
                                      std::string_view scheme,
                                      std::string_view claim_json) const {
  std::optional<std::string> agent_id = find_agent_id(name);
  if (!agent_id) return not_found("unknown name: " + std::string(name));
  auto passport = get_agent(*agent_id);
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
  auto adapter = auth_->find(scheme);
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

Result<void> Hub::unregister(std::string_view agent_id) {
  Commit batch;
  {
    auto writer = lock_writer();
    const AgentRecord* agent = state_.registry.find(agent_id);
    if (!agent) return not_registered(agent_id);
    const std::string at = now();
    batch.add(agent_unregistered_record(agent_id));
    batch.add(audit_record({{"at", at},
                            {"kind", "agent_unregistered"},
                            {"agent_id", agent_id},
                            {"name", agent->passport.name}}));
    stage_agent_event(batch, agent_id, "unregistered",
                      {{"name", agent->passport.name}, {"at", at}});
    rate_limiter_.forget(agent_id);
    if (auto committed = commit(batch, writer); !committed) return committed;
  }
  {
    std::lock_guard lock(delivery_mutex_);
    if (auto it = subscribers_.find(agent_id); it != subscribers_.end()) {
      subscribers_.erase(it);
    }
    if (auto it = pending_inbox_.find(agent_id); it != pending_inbox_.end()) {
      pending_inbox_.erase(it);
    }
  }
  publish(batch);
  return {};
}

Result<void> Hub::set_resume(std::string_view agent_id, Resume resume) {
  auto writer = lock_writer();
  const AgentRecord* agent = state_.registry.find(agent_id);
  if (!agent) return not_registered(agent_id);
  resume.last_updated = now();
  resume.version = agent->resume.version + 1;
  Commit batch;
  batch.add(resume_set_record(agent_id, resume));
  batch.add(audit_record({{"at", resume.last_updated},
                          {"kind", "resume_set"},
                          {"source", "tenant"},
                          {"agent_id", agent_id},
                          {"version", resume.version}}));
  stage_agent_event(batch, agent_id, "resume_set",
                    {{"resume", to_json(resume)},
                     {"version", resume.version},
                     {"at", resume.last_updated}});
  return commit_and_publish(batch, writer);
}

Result<void> Hub::set_skill(std::string_view agent_id,
                            std::optional<std::string> skill_md) {
  if (skill_md) {
    if (auto checked = check_text("skill_md", *skill_md); !checked) {
      return checked;
    }
  }
  auto writer = lock_writer();
  if (!state_.registry.find(agent_id)) return not_registered(agent_id);
  Commit batch;
  const std::string at = now();
  batch.add(skill_set_record(agent_id, skill_md));
  batch.add(audit_record({{"at", at},
                          {"kind", "skill_set"},
                          {"agent_id", agent_id},
                          {"removed", !skill_md.has_value()}}));
  stage_agent_event(batch, agent_id, "skill_set",
                    {{"removed", !skill_md.has_value()}, {"at", at}});
  return commit_and_publish(batch, writer);
}

Result<void> Hub::set_rule(std::string_view agent_id, Rule rule) {
  auto writer = lock_writer();
  const AgentRecord* agent = state_.registry.find(agent_id);
  if (!agent) return not_registered(agent_id);
  rule.version = agent->rule.version + 1;
  Commit batch;
  const std::string at = now();
  batch.add(rule_set_record(agent_id, rule));
  batch.add(audit_record({{"at", at},
                          {"kind", "rule_set"},
                          {"agent_id", agent_id},
                          {"version", rule.version}}));
  stage_agent_event(
      batch, agent_id, "rule_set",
      {{"rule", to_json(rule)}, {"version", rule.version}, {"at", at}});
  return commit_and_publish(batch, writer);
}

Result<void> Hub::record_observation(std::string_view owner_id,
                                     std::string_view capability,
                                     std::string_view outcome,
                                     std::optional<double> latency_ms,
                                     std::optional<std::string> task_id) {
  if (auto checked = check_name("capability", capability); !checked) {
    return checked;
  }
  if (!is_terminal_outcome(outcome)) return {};
  auto writer = lock_writer();
  const AgentRecord* owner = state_.registry.find(owner_id);
  if (!owner) return {};
  if (task_id && owner->observed_tasks.contains(*task_id)) return {};
  Resume resume = owner->resume;
  Commit batch;
  stage_observation(batch, owner_id, resume, capability, outcome, latency_ms,
                    task_id);
  return commit_and_publish(batch, writer);
}

void Hub::stage_observation(Commit& batch, std::string_view owner_id,
                            Resume& resume, std::string_view capability,
                            std::string_view outcome,
                            std::optional<double> latency_ms,
                            const std::optional<std::string>& task_id) {
  ObservedStats& stats = resume.observed[std::string(capability)];
  ++stats.n;
  if (outcome == "completed") ++stats.completed;
  if (outcome == "failed") ++stats.failed;
  if (outcome == "expired") ++stats.expired;
  if (latency_ms) stats.p50_latency_ms = latency_ms;
  resume.last_updated = now();
  ++resume.version;
  batch.add(observation_record(owner_id, resume, task_id));
  batch.add(audit_record({{"at", resume.last_updated},
                          {"kind", "resume_set"},
                          {"source", "observed"},
                          {"agent_id", owner_id},
                          {"version", resume.version},
                          {"capability", capability},
                          {"outcome", outcome}}));
  stage_agent_event(batch, owner_id, "observation_recorded",
                    {{"resume", to_json(resume)},
                     {"version", resume.version},
                     {"capability", capability},
                     {"outcome", outcome},
                     {"at", resume.last_updated}});
}

Result<void> Hub::report_turn_failure(std::string_view channel_id,
                                      std::string_view agent_id,
                                      std::string_view envelope_id,
                                      std::string_view message) {
  if (auto checked = check_text("error", message); !checked) return checked;
  auto writer = lock_writer();
  Commit batch;
  batch.add(audit_record({{"at", now()},
                          {"kind", "turn_failed"},
                          {"channel_id", channel_id},
                          {"agent_id", agent_id},
                          {"envelope_id", envelope_id},
                          {"exc_type", "RuntimeError"},
                          {"exc_message", message}}));
  if (!listeners_.empty()) {
    batch.notify([channel_id = std::string(channel_id),
                  agent_id = std::string(agent_id),
                  envelope_id = std::string(envelope_id),
                  message = std::string(message)](HubListener& listener) {
      listener.on_turn_failed(channel_id, agent_id, envelope_id, message);
    });
  }
  return commit_and_publish(batch, writer);
}

}  // namespace parley::engine
