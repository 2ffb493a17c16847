// The audit trail: the store's AuditRecorded records, in log order, as AG2's
// audit JSON objects ({"at", "kind", ...}).
#pragma once

#include <functional>
#include <nlohmann/json_fwd.hpp>

#include "engine/base/error.h"
#include "log/log_store.h"

namespace parley::replay {

// Calls `visit` with each audit record in log order; `visit` returns false
// to stop. Fails with kStorage when the log cannot be read.
engine::Result<void> visit_audit_trail(
    const log::LogStore& store,
    const std::function<bool(const nlohmann::json& record)>& visit);

// The channel an audit record is about ("" when none): its `channel_id`.
std::string audit_channel(const nlohmann::json& record);

}  // namespace parley::replay
