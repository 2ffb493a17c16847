// HubClient's typed calls on agents: the registry's reads and writes.
#include "engine/client/hub_client.h"
#include "engine/client/hub_client_calls.h"
#include "engine/json/records_json.h"

namespace parley::client {

using nlohmann::json;

void HubClient::get_agent(std::string name_or_id, Handler<Passport> done) {
  calls::start(impl_, "get_agent", {{"name_or_id", std::move(name_or_id)}},
               calls::parsed<Passport>(std::move(done), [](const json& value) {
                 return engine::passport_from_json(value);
               }));
}

void HubClient::find_agent_id(std::string name,
                              Handler<std::optional<std::string>> done) {
  calls::start(impl_, "find_agent_id", {{"name", std::move(name)}},
               calls::parsed<std::optional<std::string>>(
                   std::move(done),
                   calls::text<std::optional<std::string>>("find_agent_id")));
}

void HubClient::names_for(std::vector<std::string> agent_ids,
                          Handler<std::map<std::string, std::string>> done) {
  calls::start(
      impl_, "names_for", {{"agent_ids", std::move(agent_ids)}},
      calls::parsed<std::map<std::string, std::string>>(
          std::move(done),
          [](const json& value)
              -> engine::Result<std::map<std::string, std::string>> {
            if (!value.is_object()) {
              return engine::invalid("names_for answered a non-object");
            }
            std::map<std::string, std::string> names;
            for (const auto& [id, name] : value.items()) {
              if (!name.is_string()) {
                return engine::invalid("names_for answered a non-string");
              }
              names.emplace(id, name.get<std::string>());
            }
            return names;
          }));
}

void HubClient::list_agents(engine::AgentFilter filter,
                            Handler<std::vector<Passport>> done) {
  json params{{"limit", filter.limit}};
  if (filter.capability) params["capability"] = std::move(*filter.capability);
  if (filter.query) params["query"] = std::move(*filter.query);
  if (filter.kind) params["kind"] = std::move(*filter.kind);
  if (filter.sort_by) params["sort_by"] = std::move(*filter.sort_by);
  calls::start(
      impl_, "list_agents", std::move(params),
      calls::parsed<std::vector<Passport>>(
          std::move(done),
          calls::list_of<Passport>("list_agents", [](const json& item) {
            return engine::passport_from_json(item);
          })));
}

void HubClient::get_resume(std::string agent_id, Handler<Resume> done) {
  calls::start(impl_, "get_resume", {{"agent_id", std::move(agent_id)}},
               calls::parsed<Resume>(std::move(done), [](const json& value) {
                 return engine::resume_from_json(value);
               }));
}

void HubClient::set_resume(std::string agent_id, Resume resume,
                           Handler<void> done) {
  calls::start_built(
      impl_, "set_resume",
      [&] {
        return json{{"agent_id", std::move(agent_id)},
                    {"resume", engine::to_json(resume)}};
      },
      calls::ignored(std::move(done)));
}

void HubClient::get_rule(std::string agent_id, Handler<Rule> done) {
  calls::start(impl_, "get_rule", {{"agent_id", std::move(agent_id)}},
               calls::parsed<Rule>(std::move(done), [](const json& value) {
                 return engine::rule_from_json(value);
               }));
}

void HubClient::set_rule(std::string agent_id, Rule rule, Handler<void> done) {
  calls::start_built(
      impl_, "set_rule",
      [&] {
        return json{{"agent_id", std::move(agent_id)},
                    {"rule", engine::to_json(rule)}};
      },
      calls::ignored(std::move(done)));
}

void HubClient::get_skill(std::string agent_id,
                          Handler<std::optional<std::string>> done) {
  calls::start(impl_, "get_skill", {{"agent_id", std::move(agent_id)}},
               calls::parsed<std::optional<std::string>>(
                   std::move(done),
                   calls::text<std::optional<std::string>>("get_skill")));
}

void HubClient::set_skill(std::string agent_id,
                          std::optional<std::string> skill_md,
                          Handler<void> done) {
  calls::start(
      impl_, "set_skill",
      {{"agent_id", std::move(agent_id)},
       {"skill_md", skill_md ? json(std::move(*skill_md)) : json(nullptr)}},
      calls::ignored(std::move(done)));
}

void HubClient::record_observation(Observation observation,
                                   Handler<void> done) {
  json params{{"owner_id", std::move(observation.owner_id)},
              {"capability", std::move(observation.capability)},
              {"outcome", std::move(observation.outcome)}};
  if (observation.latency_ms) params["latency_ms"] = *observation.latency_ms;
  if (observation.task_id) params["task_id"] = std::move(*observation.task_id);
  calls::start(impl_, "record_observation", std::move(params),
               calls::ignored(std::move(done)));
}

}  // namespace parley::client
