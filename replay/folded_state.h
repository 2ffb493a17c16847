// The folded state of a store as one canonical JSON document, and its hash.
// Used by `parley audit` (fold twice, compare) and by the AG2 round trip
// (export, import, compare).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/adapters/adapter_registry.h"
#include "engine/error.h"
#include "engine/hub_state.h"
#include "log/log_store.h"

namespace parley::replay {

// Folds every record of `store` in log order through engine::HubState::apply
// (the hub's own fold) into `state`. Fails with kStorage naming the log
// sequence when a record cannot be read or folded.
engine::Result<void> fold_store(const log::LogStore& store,
                                engine::HubState& state);

// The built-in adapters, as a hub registers them.
const engine::AdapterRegistry& builtin_adapter_registry();

// The state as canonical JSON (keys sorted):
//   {"agents": {id: {"passport", "resume", "rule", "skill", "cursors",
//                    "observed_tasks"}},
//    "channels": {id: {"metadata", "adapter_state", "last_sequence"}},
//    "largest_envelope_id": id}
// Agents and channels keyed by id, so the order they were folded in does
// not matter; adapter_state is null for dormant channels.
nlohmann::json folded_state_json(const engine::HubState& state);

// 64-bit FNV-1a of the compact dump of folded_state_json().
std::uint64_t folded_state_hash(const engine::HubState& state);

// 16 lower-case hex digits.
std::string hash_hex(std::uint64_t hash);

}  // namespace parley::replay
