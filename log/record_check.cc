#include "log/record_check.h"

#include <string>

#include "schemas/record.h"

namespace parley::log {

Result<void> check_record(std::string_view record, std::uint64_t log_sequence,
                          std::uint64_t channel_sequence) {
  auto corrupt = [&](std::string what) {
    return std::unexpected(
        Error{ErrorCode::kCorruption,
              "log sequence " + std::to_string(log_sequence) + ": " + what});
  };
  auto stamped = schema::verify_record(record);
  if (!stamped) return corrupt(stamped.error().describe(record.size()));
  if (stamped->log_sequence != log_sequence) {
    return corrupt("record is stamped with log sequence " +
                   std::to_string(stamped->log_sequence));
  }
  if (channel_sequence != 0 && stamped->channel_sequence != channel_sequence) {
    return corrupt("channel index says channel sequence " +
                   std::to_string(channel_sequence) +
                   ", record is stamped with " +
                   std::to_string(stamped->channel_sequence));
  }
  return {};
}

}  // namespace parley::log
