// The in-memory LogStore: the same semantics as the RocksDB backend (same
// validation, numbering, atomicity, checks on read), nothing durable. For
// tests and for hubs that need no persistence.
#pragma once

#include <memory>

#include "log/log_store.h"

namespace parley::log {

std::unique_ptr<LogStore> make_memory_log_store();

}  // namespace parley::log
