#include "engine/registry/registry.h"

#include <algorithm>
#include <locale>
#include <optional>

#include "engine/base/utf8.h"

namespace parley::engine {

namespace {

std::set<std::string> capabilities_of(const Resume& resume) {
  std::set<std::string> out(resume.claimed_capabilities.begin(),
                            resume.claimed_capabilities.end());
  for (const auto& [capability, stats] : resume.observed) {
    out.insert(capability);
  }
  return out;
}

// Lower-cases UTF-8 text code point by code point with the C.UTF-8
// locale's Unicode case table, as Python's str.lower does (bar its few
// one-to-many mappings). Bytes that are not valid UTF-8 are kept.
std::string lower(std::string_view text) {
  static const std::locale utf8("C.UTF-8");
  const auto& ctype = std::use_facet<std::ctype<wchar_t>>(utf8);
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const char32_t cp = next_code_point(text, at);
    append_utf8(static_cast<char32_t>(ctype.tolower(static_cast<wchar_t>(cp))),
                out);
  }
  return out;
}

}  // namespace

void Registry::index_capabilities(const AgentRecord& record) {
  for (const auto& capability : capabilities_of(record.resume)) {
    by_capability_[capability].insert(record.agent_id());
  }
}

void Registry::unindex_capabilities(const AgentRecord& record) {
  for (const auto& capability : capabilities_of(record.resume)) {
    auto bucket = by_capability_.find(capability);
    if (bucket == by_capability_.end()) continue;
    bucket->second.erase(record.agent_id());
    if (bucket->second.empty()) by_capability_.erase(bucket);
  }
}

void Registry::add(AgentRecord record) {
  const std::string id = record.agent_id();
  by_name_[record.passport.name] = id;
  index_capabilities(record);
  order_.push_back(id);
  agents_.insert_or_assign(id, std::move(record));
}

void Registry::remove(std::string_view agent_id) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return;
  auto name = by_name_.find(it->second.passport.name);
  if (name != by_name_.end() && name->second == agent_id) by_name_.erase(name);
  unindex_capabilities(it->second);
  std::erase(order_, it->first);
  agents_.erase(it);
}

void Registry::set_resume(std::string_view agent_id, Resume resume) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return;
  unindex_capabilities(it->second);
  it->second.resume = std::move(resume);
  index_capabilities(it->second);
}

void Registry::set_rule(std::string_view agent_id, Rule rule) {
  auto it = agents_.find(agent_id);
  if (it != agents_.end()) it->second.rule = std::move(rule);
}

void Registry::set_skill(std::string_view agent_id,
                         std::optional<std::string> skill) {
  auto it = agents_.find(agent_id);
  if (it != agents_.end()) it->second.skill_md = std::move(skill);
}

void Registry::remember_observed_task(std::string_view agent_id,
                                      std::string task_id) {
  auto it = agents_.find(agent_id);
  if (it != agents_.end()) it->second.observed_tasks.insert(std::move(task_id));
}

void Registry::set_cursor(std::string_view agent_id,
                          std::string_view channel_id,
                          std::string envelope_id) {
  auto it = agents_.find(agent_id);
  if (it != agents_.end()) {
    it->second.cursors.insert_or_assign(std::string(channel_id),
                                        std::move(envelope_id));
  }
}

const AgentRecord* Registry::find(std::string_view agent_id) const {
  auto it = agents_.find(agent_id);
  return it == agents_.end() ? nullptr : &it->second;
}

std::optional<std::string> Registry::find_agent_id(
    std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

const AgentRecord* Registry::resolve(std::string_view name_or_id) const {
  if (const AgentRecord* by_id = find(name_or_id)) return by_id;
  auto id = find_agent_id(name_or_id);
  return id ? find(*id) : nullptr;
}

std::string Registry::name_for(std::string_view agent_id,
                               std::optional<std::string_view> fallback) const {
  if (const AgentRecord* record = find(agent_id)) return record->passport.name;
  return std::string(fallback.value_or(agent_id));
}

std::vector<std::string> Registry::agents_with_capability(
    std::string_view capability) const {
  auto bucket = by_capability_.find(capability);
  if (bucket == by_capability_.end()) return {};
  return {bucket->second.begin(), bucket->second.end()};
}

std::vector<const AgentRecord*> Registry::list(
    const AgentFilter& filter) const {
  const std::string query = filter.query ? lower(*filter.query) : "";
  std::vector<const AgentRecord*> out;
  for (const auto& id : order_) {
    const AgentRecord& record = agents_.at(id);
    if (filter.kind && record.passport.effective_kind() != *filter.kind) {
      continue;
    }
    if (filter.capability &&
        !capabilities_of(record.resume).contains(*filter.capability)) {
      continue;
    }
    if (filter.query &&
        lower(record.resume.summary).find(query) == std::string::npos) {
      continue;
    }
    out.push_back(&record);
  }
  if (filter.sort_by == "name") {
    std::ranges::stable_sort(out, {}, [](const AgentRecord* record) {
      return record->passport.name;
    });
  }
  if (out.size() > filter.limit) out.resize(filter.limit);
  return out;
}

}  // namespace parley::engine
