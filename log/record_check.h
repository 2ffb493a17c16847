// The checks every backend applies to a record it reads back.
#pragma once

#include <cstdint>
#include <string_view>

#include "log/error.h"

namespace parley::log {

// The record passes schema::verify_record (the FlatBuffers Verifier, its
// checksum from schema 3 on, its schema version) and carries the sequences
// it is stored under (`channel_sequence` 0: not checked). Otherwise
// kCorruption naming the log sequence, e.g. "log sequence 12: checksum
// mismatch (stored 0x…, computed 0x…): the record's 301 bytes are damaged".
Result<void> check_record(std::string_view record, std::uint64_t log_sequence,
                          std::uint64_t channel_sequence = 0);

}  // namespace parley::log
