// AG2's on-disk store layout, as `parley export-ag2` writes it and `parley
// import-ag2` reads it:
//
//   agents/{agent_id}/passport.json        AG2 declaration order, no newline
//   agents/{agent_id}/resume.json          "
//   agents/{agent_id}/rule.json            "
//   agents/{agent_id}/SKILL.md             raw text (only when set)
//   agents/{agent_id}/inbox.cursors.json   {channel_id: envelope_id}, sorted
//                                          (only when the agent acked one)
//   registry/by_capability.json            {capability: [sorted ids]}, sorted
//   channels/{channel_id}/metadata.json    AG2 declaration order, no newline
//   channels/{channel_id}/wal.jsonl        one envelope per line, keys sorted
//   audit/audit.jsonl                      one audit record per line, sorted
//   tasks/{task_id}/metadata.json          AG2 TaskMetadata, declaration order
//   tasks/{task_id}/checkpoint.json        the owner's last checkpoint
//
// JSON is written as Python's json.dumps with default arguments (", " and
// ": ", non-ASCII as \uXXXX), so a layout AG2 wrote comes back byte for byte.
#pragma once

#include <expected>
#include <string>

namespace parley::replay {

enum class Ag2ErrorKind {
  kUsage,     // the target is not usable (a non-empty directory or store)
  kData,      // the layout or the store holds something malformed
  kNotFound,  // no AG2 layout at the path
  kIo,        // reading or writing a file failed
};

struct Ag2Error {
  Ag2ErrorKind kind;
  std::string message;
};

template <typename T>
using Ag2Result = std::expected<T, Ag2Error>;

}  // namespace parley::replay
