// The identity records of a registered participant (passport, resume, rule),
// with AG2's field names and defaults. JSON shapes: engine/ops/records_json.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/base/json_text.h"

namespace parley::engine {

struct AuthInfo {
  std::string scheme = "none";
  std::optional<std::string> issuer;
  std::optional<std::string> audience;
  std::optional<std::string> key_fingerprint;
  JsonText claim = "{}";  // the credential; never stored or echoed by Parley
};

// Identity; immutable after registration.
struct Passport {
  std::string name;
  std::string owner;
  std::optional<std::string> provider;
  std::optional<std::string> model;
  std::optional<JsonText> cost;
  std::optional<std::string> region;
  AuthInfo auth;
  std::optional<std::string> kind;  // "agent" | "human" | "remote_agent"
  std::optional<std::string> hub_id;
  std::int64_t version = 1;
  std::optional<std::string> agent_id;  // hub-stamped
  std::string created_at;               // hub-stamped

  // `kind`, with null meaning "agent".
  std::string_view effective_kind() const {
    return kind ? std::string_view(*kind) : std::string_view("agent");
  }
};

struct ResumeExample {
  std::string title;
  std::string outcome;
  std::optional<std::string> task_id;
  std::optional<std::string> channel_id;
  std::optional<std::string> when;
  std::string note;
};

// Hub-maintained track record of one capability, from the owner's
// terminal task outcomes (cancelled counts only in `n`).
struct ObservedStats {
  std::int64_t n = 0;
  std::int64_t completed = 0;
  std::int64_t failed = 0;
  std::int64_t expired = 0;
  std::optional<double> p50_latency_ms;
};

struct Resume {
  std::vector<std::string> claimed_capabilities;
  std::vector<std::string> domains;
  std::string summary;
  std::vector<ResumeExample> examples;
  std::map<std::string, ObservedStats> observed;
  std::int64_t version = 1;
  std::string last_updated;
};

// A duration as AG2 accepts it: whole seconds, or a string such as "2h"
// (engine/registry/duration.h parses it).
using DurationSpec = std::variant<std::int64_t, std::string>;

// Per-agent access and limits, enforced by the hub, with AG2's defaults.
struct Rule {
  std::int64_t version = 1;
  struct Access {
    std::vector<std::string> inbound_from{"*"};
    std::vector<std::string> outbound_to{"*"};
    std::vector<std::string> initiate_types{"*"};
    std::vector<std::string> accept_types{"*"};
  } access;
  struct Limits {
    std::int64_t max_concurrent_channels = 0;  // 0 = unlimited
    std::int64_t max_concurrent_tasks = 0;     // 0 = unlimited
    DurationSpec channel_ttl_default = std::string("2h");
    DurationSpec task_ttl_default = std::string("15m");
    std::int64_t rate_per_minute = 0;       // stored only
    std::int64_t rate_burst = 0;            // stored only
    std::int64_t delegation_depth = 5;      // 0 disables
    std::int64_t inbox_max_pending = 1000;  // 0 disables
    std::string inbox_overflow = "reject";
    std::optional<std::int64_t> inbox_high_water;  // null = 80 % of max
  } limits;
};

}  // namespace parley::engine
