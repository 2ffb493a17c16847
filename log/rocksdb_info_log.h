// Internal to the RocksDB backend: the info log (<store>/LOG) a read-write
// store writes, in place of RocksDB's own.
//
// RocksDB's logger writes through a WritableFileWriter, and Debian's
// RocksDB 7.8 keeps the assertion that aborts the process when that writer
// is used again after a failed write: on a full disk the LOG write of a
// later message (DB::Close logs) took the whole hub down. This logger
// writes each line with write(2) and drops the line when that fails, so a
// full disk costs log lines, never the process.
//
// At its first line the previous session's LOG is kept as LOG.old (one
// generation). Thread safety: Logv may be called from any thread.
#pragma once

#include <rocksdb/env.h>

#include <filesystem>
#include <memory>

namespace parley::log::rocksdb_backend {

std::shared_ptr<rocksdb::Logger> make_info_log(
    const std::filesystem::path& directory);

}  // namespace parley::log::rocksdb_backend
