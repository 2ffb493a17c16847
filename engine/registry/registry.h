// The folded identity registry: every registered participant's passport,
// resume, rule and SKILL.md, with the name and capability indexes. Pure state:
// the hub folds log records into it (hydrate and live alike) and answers
// queries from it.
//
// Thread safety: none; the hub guards it (one writer, shared readers).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/registry/identity.h"
#include "log/string_map.h"

namespace parley::engine {

struct AgentRecord {
  Passport passport;  // agent_id always set
  Resume resume;
  Rule rule;
  std::optional<std::string> skill_md;
  // A remote_agent registered over the wire: the agents of this hub bound
  // to the registering connection (sorted). Empty for every other agent.
  std::vector<std::string> owners;
  // Task ids whose observation was counted for this owner: dedup is per
  // (owner, task id), so another agent reporting the id first cannot
  // suppress the owner's own observation.
  std::set<std::string, std::less<>> observed_tasks;
  // channel id -> the highest envelope id this agent acked there (string
  // order); replay on reconnect starts after it.
  std::map<std::string, std::string, std::less<>> cursors;

  const std::string& agent_id() const { return *passport.agent_id; }
};

struct AgentFilter {
  std::optional<std::string> capability;
  std::optional<std::string> query;    // case-insensitive, in resume.summary
  std::optional<std::string> kind;     // effective kind
  std::optional<std::string> sort_by;  // only "name" sorts
  std::size_t limit = 50;
};

class Registry {
 public:
  // Folds. Each assumes the record was validated before it was logged;
  // an unknown agent id is ignored.
  void add(AgentRecord record);
  void remove(std::string_view agent_id);
  void set_resume(std::string_view agent_id, Resume resume);
  void set_rule(std::string_view agent_id, Rule rule);
  void set_skill(std::string_view agent_id, std::optional<std::string> skill);
  void remember_observed_task(std::string_view agent_id, std::string task_id);
  void set_cursor(std::string_view agent_id, std::string_view channel_id,
                  std::string envelope_id);

  // Queries.
  const AgentRecord* find(std::string_view agent_id) const;
  std::optional<std::string> find_agent_id(std::string_view name) const;
  // An exact agent id first, then a name, so a name can never stand in for
  // another agent's id.
  const AgentRecord* resolve(std::string_view name_or_id) const;
  // The registered name, else `fallback`, else the id itself.
  std::string name_for(std::string_view agent_id,
                       std::optional<std::string_view> fallback = {}) const;
  // Sorted ids claiming or having observed `capability`.
  std::vector<std::string> agents_with_capability(
      std::string_view capability) const;
  // Registration order, filtered, sorted, truncated.
  std::vector<const AgentRecord*> list(const AgentFilter& filter) const;
  // capability -> sorted ids; the derived index AG2 writes to disk.
  const std::map<std::string, std::set<std::string>, std::less<>>&
  capability_index() const {
    return by_capability_;
  }
  std::size_t size() const { return agents_.size(); }

 private:
  void index_capabilities(const AgentRecord& record);
  void unindex_capabilities(const AgentRecord& record);

  log::StringMap<AgentRecord> agents_;
  std::vector<std::string> order_;  // registration order
  log::StringMap<std::string> by_name_;
  std::map<std::string, std::set<std::string>, std::less<>> by_capability_;
};

}  // namespace parley::engine
