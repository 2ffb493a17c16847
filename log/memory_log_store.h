// The in-memory LogStore: the same semantics as the RocksDB backend (same
// validation, numbering, atomicity, checks on read), nothing durable. For
// tests and for hubs that need no persistence; and as an overlay that adds
// to a store it must not write.
#pragma once

#include <memory>

#include "log/log_store.h"

namespace parley::log {

std::unique_ptr<LogStore> make_memory_log_store();

// A memory store over `base`, which it reads through and never writes: it
// starts out holding base's records and indexes, and keeps what is
// appended to it in memory, numbered after base's last record. For opening
// a hub on a store that must stay untouched (parley audit). `base` must
// outlive it and must not change while it is in use; closing it leaves
// `base` open. Its scans visit base's entries, then its own.
std::unique_ptr<LogStore> make_overlay_log_store(const LogStore& base);

}  // namespace parley::log
