// A LogStore that forwards to another and ignores close(): a `restart` in
// a fuzzed `parley exec` script closes its hub, which closes the hub's
// store, and then reopens on the same records.
#pragma once

#include <memory>

#include "log/log_store.h"

namespace parley::fuzz {

// Every call but close() goes to `inner`, which stays open.
std::shared_ptr<log::LogStore> keep_open(std::shared_ptr<log::LogStore> inner);

}  // namespace parley::fuzz
