// Internal to the RocksDB backend: checks the record types of a store's
// write-ahead log files before a secondary instance (every read-only open)
// reads them.
//
// Why: a secondary reads WAL files with a reader built to follow a growing
// file, and on a record whose type is one of the recyclable types (5-8,
// whose headers carry a log number, written only when WAL files are
// recycled, which Parley never enables) with a log number not its own it
// spins forever without consuming the record. Found by
// tests/store_corruption_test.cc: one flipped type byte hung `parley
// channels`.
//
// Layout read: the MANIFEST's (rocksdb_manifest_check.h), in the WAL files
// NNNNNN.log; without recycling and WAL compression RocksDB writes types 1
// to 4 only. Each file is scanned block by block, record header by record
// header, while the headers are whole and their records fit their block:
// a zero type (space not yet written) or a length past its block ends the
// scan of the file, leaving it to RocksDB's own checks, as does a header
// that is not all there yet (a live writer's record in progress).
#pragma once

#include <filesystem>

#include "log/error.h"

namespace parley::log::rocksdb_backend {

// kCorruption naming the WAL file and the byte of a record of a type
// RocksDB never writes to this store; kIoError when a WAL file cannot be
// read. A file that is gone by the time it is read (a live writer
// retired it) passes.
Result<void> check_wal_record_types(const std::filesystem::path& directory);

}  // namespace parley::log::rocksdb_backend
