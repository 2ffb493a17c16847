// A hub's health snapshot: AG2's `health()` fields plus Parley's own (channels
// by state, per-agent inbox pressure, the log sequence, whether the hub stopped
// accepting changes).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "log/commit_stats.h"

namespace parley::engine {

struct HubHealth {
  // AG2's fields.
  std::int64_t active_channels = 0;  // non-terminal (pending included)
  std::int64_t registered_agents = 0;
  std::int64_t pending_inbox_total = 0;
  std::optional<std::int64_t> max_pending_inbox_depth;  // null: no counters
  std::int64_t registered_listeners = 0;
  std::int64_t adapters_loaded = 0;
  // Bytes of audit records this hub appended since it opened (their log
  // record sizes); process-local, as AG2's is.
  std::int64_t audit_log_bytes = 0;

  // Parley's.
  // "pending", "active", "closing", "closed", "expired" -> count; every
  // state is present.
  std::map<std::string, std::int64_t> channels_by_state;
  // Agent id -> its pending-inbox counter, for every agent that has one
  // (+1 per substantive delivery, -1 per substantive post of its own;
  // in memory, reset on restart).
  std::map<std::string, std::int64_t> pending_inbox;
  std::uint64_t log_sequence = 0;     // the last durable log sequence
  std::uint64_t log_cache_bytes = 0;  // LogStore::cache_bytes()
  // LogStore::commit_stats(); for /metrics, not part of the JSON.
  log::CommitStatsSnapshot log_commits;
  // Why the hub stopped accepting changes after a failed log write.
  std::optional<std::string> failure;
  bool closed = false;
};

// {"active_channels", "registered_agents", "pending_inbox_total",
//  "max_pending_inbox_depth", "registered_listeners", "adapters_loaded",
//  "audit_log_bytes", "channels_by_state", "pending_inbox", "log_sequence",
//  "failure", "closed"}.
nlohmann::json to_json(const HubHealth& health);

}  // namespace parley::engine
