// `parley import-ag2`: reads AG2's on-disk layout (replay/ag2_layout.h) into
// a fresh Parley store, as ordinary log records: agents registered
// (credentials dropped: Parley never stores them), channels created (the
// metadata at creation: pending, every invitee in pending_acks), envelopes
// with AG2's original ids and timestamps, audit records, inbox cursors,
// tasks (replay/ag2_tasks.h).
// Records are ordered by time, each channel's WAL and the audit log keeping
// their file order. The lifecycle is then folded from the envelopes: the
// creator's invite / opened envelopes and, when metadata.json says the
// channel is closed or expired, its closed / expired envelope with that
// reason count as the hub's own.
//
// Everything is parsed, then folded in memory, before anything is written,
// and written as one atomic batch: on any error nothing is written. A torn last
// line of a wal.jsonl or audit.jsonl (no final newline, not valid JSON) is
// skipped and reported as a warning naming the file and line; a bad line
// anywhere else is a data error.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "log/log_store.h"
#include "replay/ag2_layout.h"

namespace parley::replay {

struct Ag2ImportReport {
  std::size_t agents = 0;
  std::size_t channels = 0;
  std::size_t envelopes = 0;
  std::size_t audit_records = 0;
  std::size_t cursors = 0;
  std::size_t task_records = 0;  // TaskUpdated and TaskCheckpointed
  // Torn lines skipped, things not carried, and channels whose folded
  // lifecycle differs from their metadata.json; "FILE:LINE: what" or
  // "channel ID: what".
  std::vector<std::string> warnings;
};

// `store` must hold no record yet (else kUsage, nothing written).
Ag2Result<Ag2ImportReport> import_ag2(const std::filesystem::path& ag2_dir,
                                      log::LogStore& store);

}  // namespace parley::replay
