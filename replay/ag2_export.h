// `parley export-ag2`: writes a store as AG2's on-disk layout
// (replay/ag2_layout.h), so AG2's Python hub can open it.
//
// Agents are the registered ones (unregistered agents' files are gone, as
// in AG2); channels carry their folded metadata and every envelope of their
// log; audit.jsonl carries the audit records in log order; tasks/ the last
// TaskUpdated and TaskCheckpointed record of each task (replay/ag2_tasks.h). A
// closed or expired channel's `closed_at` is the `at` of its channel_closed /
// channel_expired audit record when there is one (AG2 stamps the transition
// a moment before it writes the closed envelope), else the folded value.
// Reads only; writes nothing into the store.
#pragma once

#include <cstddef>
#include <filesystem>

#include "log/log_store.h"
#include "replay/ag2_layout.h"

namespace parley::replay {

struct Ag2ExportReport {
  std::size_t agents = 0;
  std::size_t channels = 0;
  std::size_t envelopes = 0;
  std::size_t audit_records = 0;
  std::size_t tasks = 0;
};

// `out_dir` must be absent or an empty directory (else kUsage); it is
// created.
Ag2Result<Ag2ExportReport> export_ag2(const log::LogStore& store,
                                      const std::filesystem::path& out_dir);

}  // namespace parley::replay
