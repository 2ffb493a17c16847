// The consistency check of the fuzz targets that drive a live hub: what
// the hub serves equals what its log folds to.
#pragma once

#include "engine/hub/hub.h"
#include "log/log_store.h"

namespace parley::fuzz {

// Folds `store` afresh (replay::FoldedStore) and aborts unless `hub`, open
// on it and idle, serves the same agents (passport, resume, rule,
// SKILL.md), channels (metadata, adapter state) and tasks.
void check_hub_against_log(const engine::Hub& hub, const log::LogStore& store);

}  // namespace parley::fuzz
