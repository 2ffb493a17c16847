#include "log/log_store.h"

#include <optional>

namespace parley::log {

Result<std::vector<Position>> LogStore::append_deferred(
    std::span<AppendEntry> batch, DurableCallback on_durable) {
  std::optional<std::vector<Position>> sequenced;
  auto appended = append(batch, [&](std::span<const Position> positions) {
    sequenced.emplace(positions.begin(), positions.end());
  });
  if (!sequenced) return appended;  // refused before sequencing
  on_durable(appended ? Result<void>{} : std::unexpected(appended.error()));
  return std::move(*sequenced);
}

}  // namespace parley::log
