#include "replay/audit_trail.h"

#include <nlohmann/json.hpp>

#include "engine/base/flex_json.h"
#include "parley/schemas/log_generated.h"

namespace parley::replay {

engine::Result<void> visit_audit_trail(
    const log::LogStore& store,
    const std::function<bool(const nlohmann::json& record)>& visit) {
  auto read = store.read(
      1, log::kLastSequence, [&](std::uint64_t, std::string_view bytes) {
        const auto* audit =
            schema::GetRecord(bytes.data())->body_as_AuditRecorded();
        if (!audit || !audit->record()) return true;
        return visit(engine::flex_to_json(
            {audit->record()->data(), audit->record()->size()}));
      });
  if (!read) {
    return engine::fail(engine::ErrorKind::kStorage,
                        std::string(log::to_string(read.error().code)) + ": " +
                            read.error().message);
  }
  return {};
}

std::string audit_channel(const nlohmann::json& record) {
  auto channel = record.find("channel_id");
  return channel != record.end() && channel->is_string()
             ? channel->get<std::string>()
             : std::string();
}

}  // namespace parley::replay
