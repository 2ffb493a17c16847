#include "log/log_store.h"

namespace parley::log {

std::vector<Position> positions_of(std::span<const AppendEntry> batch) {
  std::vector<Position> positions;
  positions.reserve(batch.size());
  for (const AppendEntry& entry : batch) positions.push_back(entry.position);
  return positions;
}

Result<void> LogStore::append_deferred(std::span<AppendEntry> batch,
                                       DurableCallback on_durable) {
  bool sequenced = false;
  auto appended = append(batch, [&] { sequenced = true; });
  if (!appended && !sequenced) {  // refused before sequencing: nothing told
    return std::unexpected(appended.error());
  }
  on_durable(appended ? Result<void>{} : std::unexpected(appended.error()));
  return {};
}

}  // namespace parley::log
