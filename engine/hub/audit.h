// The audit records the hub writes (AuditRecorded).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace parley::engine {

// `audit` is one AG2 audit JSON object ({"at", "kind", ...}) the hub built
// from validated fields, so it is always storable.
std::string audit_record(const nlohmann::json& audit);

}  // namespace parley::engine
