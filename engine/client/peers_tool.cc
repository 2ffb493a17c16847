// The `peers` plugin tool (engine/client/network_tools.h).
#include <algorithm>
#include <limits>

#include "engine/base/python_repr.h"
#include "engine/client/agent_client.h"
#include "engine/client/network_tools.h"
#include "engine/client/tool_support.h"
#include "engine/json/records_json.h"
#include "engine/registry/skill.h"

namespace parley::client {

namespace {

using nlohmann::json;
using tools::error_result;
using tools::member;
using tools::or_null;

// AG2's _passport_summary, from the wire's passport and resume objects.
json summary_of(const json& passport, const json& resume) {
  std::int64_t completed = 0;
  std::int64_t total = 0;
  const json& observed = member(resume, "observed");
  if (observed.is_object()) {
    for (const auto& [capability, stats] : observed.items()) {
      completed += member(stats, "completed").is_number_integer()
                       ? member(stats, "completed").get<std::int64_t>()
                       : 0;
      total += member(stats, "n").is_number_integer()
                   ? member(stats, "n").get<std::int64_t>()
                   : 0;
    }
  }
  const json& cost = member(passport, "cost");
  json capabilities = member(resume, "claimed_capabilities");
  return {
      {"name", member(passport, "name")},
      {"agent_id", member(passport, "agent_id")},
      {"summary", member(resume, "summary")},
      {"capabilities", capabilities.is_array() ? capabilities : json::array()},
      {"observed_success_rate",
       total != 0
           ? json(static_cast<double>(completed) / static_cast<double>(total))
           : json(nullptr)},
      {"cost", cost.is_object()
                   ? json{{"input_per_mtok", member(cost, "input_per_mtok")},
                          {"output_per_mtok", member(cost, "output_per_mtok")},
                          {"latency_tier", member(cost, "latency_tier")}}
                   : json(nullptr)}};
}

// A number, or `missing` for anything else.
double number_or(const json& value, double missing) {
  return value.is_number() ? value.get<double>() : missing;
}

// AG2's sort_by, stable as Python's sort: by name, by input cost (none
// last), by observed success rate (highest first, none as 0).
void sort_summaries(json& summaries, std::string_view sort_by) {
  auto& items = summaries.get_ref<json::array_t&>();
  if (sort_by == "name") {
    std::ranges::stable_sort(items, {}, [](const json& s) {
      return member(s, "name").is_string()
                 ? member(s, "name").get<std::string>()
                 : std::string();
    });
  } else if (sort_by == "cost") {
    std::ranges::stable_sort(items, {}, [](const json& s) {
      return number_or(member(member(s, "cost"), "input_per_mtok"),
                       std::numeric_limits<double>::infinity());
    });
  } else if (sort_by == "track_record") {
    std::ranges::stable_sort(items, std::greater<>{}, [](const json& s) {
      return number_or(member(s, "observed_success_rate"), 0.0);
    });
  }
}

// find: the hub's list, then each agent's resume in turn.
struct Finding : std::enable_shared_from_this<Finding> {
  std::shared_ptr<AgentClient> client;
  std::string sort_by;
  json passports;
  std::size_t next = 0;
  json summaries = json::array();
  Handler<ToolResult> done;

  void resume_next() {
    while (next < passports.size() &&
           member(passports[next], "agent_id") == client->agent_id()) {
      ++next;  // not the caller
    }
    if (next == passports.size()) {
      sort_summaries(summaries, sort_by);
      return done(tools::json_result(summaries));
    }
    const json& passport = passports[next];
    client->hub_client()->call(
        "get_resume", json{{"agent_id", member(passport, "agent_id")}}.dump(),
        [self = shared_from_this()](Result<std::string> resume) {
          if (!resume) {
            return self->done(
                error_result("get_resume failed", resume.error()));
          }
          self->summaries.push_back(
              summary_of(self->passports[self->next],
                         json::parse(*resume, nullptr, false)));
          ++self->next;
          self->resume_next();
        });
  }
};

void find(const json& arguments, const TurnDependencies& dependencies,
          Handler<ToolResult> done) {
  json params{{"limit", tools::integer(arguments, "limit", 20)}};
  for (const char* key : {"query", "capability"}) {
    if (auto value = tools::text(arguments, key)) params[key] = *value;
  }
  auto finding = std::make_shared<Finding>();
  finding->client = dependencies.agent_client;
  finding->sort_by = tools::text(arguments, "sort_by").value_or("");
  finding->done = std::move(done);
  finding->client->hub_client()->call(
      "list_agents", params.dump(), [finding](Result<std::string> listed) {
        if (!listed) {
          return finding->done(
              error_result("list_agents failed", listed.error()));
        }
        finding->passports = json::parse(*listed, nullptr, false);
        if (!finding->passports.is_array()) {
          finding->passports = json::array();
        }
        finding->resume_next();
      });
}

json observed_json(const engine::Resume& resume) {
  json observed = json::object();
  for (const auto& [capability, stats] : resume.observed) {
    observed[capability] = {{"n", stats.n},
                            {"completed", stats.completed},
                            {"failed", stats.failed},
                            {"expired", stats.expired}};
  }
  return observed;
}

json profile(const Passport& passport, const engine::Resume& resume,
             std::string skill_md) {
  return {{"passport",
           {{"name", passport.name},
            {"agent_id", or_null(passport.agent_id)},
            {"owner", passport.owner},
            {"provider", or_null(passport.provider)},
            {"model", or_null(passport.model)}}},
          {"resume",
           {{"summary", resume.summary},
            {"claimed_capabilities", resume.claimed_capabilities},
            {"domains", resume.domains},
            {"observed", observed_json(resume)}}},
          {"skill_md", std::move(skill_md)}};
}

void describe(const json& arguments, const TurnDependencies& dependencies,
              Handler<ToolResult> done) {
  const auto name = tools::text(arguments, "name");
  if (!name || name->empty()) {
    return done(error_result("describe requires `name` (or agent_id)"));
  }
  auto hub = dependencies.agent_client->hub_client();
  hub->get_agent(*name, [hub, name = *name,
                         done = std::move(done)](Result<Passport> passport) {
    if (!passport || !passport->agent_id) {
      return done(
          error_result("peer " + engine::python_repr(name) + " not found"));
    }
    const json id{{"agent_id", *passport->agent_id}};
    hub->call(
        "get_resume", id.dump(),
        [hub, passport = *passport, done](Result<std::string> text) {
          if (!text) {
            return done(error_result("get_resume failed", text.error()));
          }
          auto resume =
              engine::resume_from_json(json::parse(*text, nullptr, false));
          if (!resume) {
            return done(
                error_result("get_resume failed: " + resume.error().message));
          }
          hub->get_skill(
              passport.agent_id.value_or(""),
              [passport, resume = *resume,
               done](Result<std::optional<std::string>> skill) {
                if (!skill) {
                  return done(error_result("get_skill failed", skill.error()));
                }
                std::string skill_md = skill->value_or("");
                if (skill_md.empty()) {
                  skill_md = engine::render_fallback_skill(passport, resume);
                }
                done(tools::json_result(
                    profile(passport, resume, std::move(skill_md))));
              });
        });
  });
}

}  // namespace

Tool peers_tool() {
  ToolSchema schema{
      .name = "peers",
      .description =
          "Discover and describe peers. find: query?, capability?, sort_by? "
          "(name, cost, track_record), limit. describe: name (or agent_id) "
          "-> {passport, resume, skill_md}.",
      .parameters =
          R"j({"type":"object","properties":{)j"
          R"j("action":{"type":"string","enum":["find","describe"]},)j"
          R"j("query":{"type":["string","null"],"description":"find: a substring of the peer's summary"},)j"
          R"j("capability":{"type":["string","null"],"description":"find: a capability the peer claims or was observed in"},)j"
          R"j("sort_by":{"type":["string","null"],"enum":["name","cost","track_record",null]},)j"
          R"j("name":{"type":["string","null"],"description":"describe: the peer's name or agent_id"},)j"
          R"j("limit":{"type":"integer","description":"find: at most this many (default 20)"}},)j"
          R"j("required":["action"]})j"};
  auto run = [](std::string arguments_json,
                const TurnDependencies& dependencies,
                Handler<ToolResult> done) {
    tools::dispatch(arguments_json, dependencies, std::move(done),
                    {{"find", find}, {"describe", describe}});
  };
  return {std::move(schema), std::move(run)};
}

}  // namespace parley::client
