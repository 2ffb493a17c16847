// The crash campaign's exact check: every record a child saw acknowledged
// is in the log exactly once, and each child's acks of one stream appear
// in the log in the order it saw them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "log/log_store.h"
#include "tests/crashtest/ack_channel.h"

namespace parley::crashtest {

struct AckCheck {
  std::uint64_t records = 0;          // in the log
  std::uint64_t acked = 0;            // acks checked
  std::uint64_t lost = 0;             // acked, not in the log
  std::uint64_t duplicated = 0;       // acked and there twice or more, or any
                                      // unique token there twice or more
  std::uint64_t out_of_order = 0;     // acks of one stream in another order
  std::vector<std::string> problems;  // the first few, named
};

// `generations`: the acks of each child that ran on `store`, in the order
// the children ran. Fails only when the log cannot be read (read() checks
// that sequences are dense and every record verifies).
log::Result<AckCheck> check_acks(
    const log::LogStore& store,
    const std::vector<std::vector<AckedToken>>& generations);

}  // namespace parley::crashtest
