// Helpers shared by the task suites: AG2 task JSON, ops calls that must
// succeed, audit filters and a listener that records task events.
#pragma once

#include <doctest/doctest.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/hub/hub_listener.h"
#include "tests/hub_fixture.h"

namespace parley::testing {

inline constexpr std::string_view kTaskT0 = "2026-01-01T00:00:00+00:00";

// An AG2 TaskMetadata as the mirror sends it on TaskStarted.
inline nlohmann::json task_metadata(
    std::string_view task_id, std::string_view owner,
    std::optional<std::string> channel = std::nullopt,
    std::optional<std::string> capability = std::nullopt) {
  using nlohmann::json;
  return {{"task_id", task_id},
          {"owner_id", owner},
          {"spec",
           {{"title", "work " + std::string(task_id)},
            {"description", ""},
            {"payload", json::object()},
            {"capability", capability ? json(*capability) : json(nullptr)}}},
          {"state", "running"},
          {"created_at", kTaskT0},
          {"started_at", kTaskT0},
          {"channel_id", channel ? json(*channel) : json(nullptr)}};
}

// Runs `op`, REQUIREs success, returns its result.
inline nlohmann::json call_ok(TestHub& t, std::string_view op,
                              const nlohmann::json& params) {
  auto result = t.ops().call(op, params);
  REQUIRE_MESSAGE(result.has_value(),
                  op << ": " << testing::error_message(result));
  return *result;
}

inline void observe(TestHub& t, const nlohmann::json& metadata) {
  call_ok(t, "observe_task", {{"metadata", metadata}});
}

inline nlohmann::json get_task(TestHub& t, std::string_view task_id) {
  return call_ok(t, "get_task", {{"task_id", task_id}});
}

inline std::vector<nlohmann::json> audit_of_kind(TestHub& t,
                                                 std::string_view kind) {
  std::vector<nlohmann::json> out;
  for (auto& record : t.audit()) {
    if (record.value("kind", "") == kind) out.push_back(std::move(record));
  }
  return out;
}

struct TaskEventLog final : engine::HubListener {
  struct Event {
    std::string task_id;
    std::string kind;
    nlohmann::json payload;
  };
  void on_task_event(std::string_view task_id, std::string_view kind,
                     const nlohmann::json& payload) override {
    std::lock_guard lock(mutex);
    events.push_back({std::string(task_id), std::string(kind), payload});
  }
  std::vector<Event> snapshot() {
    std::lock_guard lock(mutex);
    return events;
  }
  std::mutex mutex;
  std::vector<Event> events;
};

// Adds `log` to the hub's listeners and restarts so it takes effect.
inline void listen(TestHub& t, const std::shared_ptr<TaskEventLog>& log) {
  t.set_options(
      [log](engine::HubOptions& options) { options.listeners.push_back(log); });
  t.restart();
}

}  // namespace parley::testing
