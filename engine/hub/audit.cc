#include "engine/hub/audit.h"

#include <nlohmann/json.hpp>

#include "engine/base/flex_json.h"
#include "engine/records/log_records.h"

namespace parley::engine {

std::string audit_record(const nlohmann::json& audit) {
  const FlexBytes flex = to_flex(audit).value();
  return audit_record(audit.at("kind").get_ref<const std::string&>(), flex);
}

}  // namespace parley::engine
