// Internal to the RocksDB backend: checks, before RocksDB opens a store,
// the one part of a table file RocksDB parses without checking it first.
//
// RocksDB 7.8 reads a table file's properties block with checksums off
// (ReadTablePropertiesHelper: ingested files may carry a rewritten global
// sequence number) and parses it before it verifies it; a flipped byte in
// the block's footer then trips an assertion (DataBlockHashIndex, which
// Debian's librocksdb keeps) and aborts the process. Every other block is
// verified before it is parsed. So each table file's footer, metaindex
// block and properties block are checked here first, with the same block
// checksums RocksDB writes, and a store holding a damaged one is refused,
// naming the file, before RocksDB sees it.
//
// Table file layout read here (block-based tables, format versions 2-5,
// as Parley's column families write them: families() sets kXXH3):
//   ... blocks ... | metaindex block | trailer | footer (53 bytes)
//   footer   checksum type (1) | metaindex handle | index handle (varint64
//            offset and size each) | zero padding to 41 bytes |
//            format version (fixed32) | magic 0x88e241b785f4cff7 (fixed64)
//   trailer  compression type (1) | checksum (fixed32) of the block and
//            the compression type byte; kXXH3: the low 32 bits of
//            XXH3-64 of the block, xor (type byte * 0x6b9083d9)
//   metaindex  a block of (name -> block handle) entries, among them
//            "rocksdb.properties"
// A file this does not understand (another format version or checksum
// type) is left to RocksDB.
#pragma once

#include <filesystem>

#include "log/error.h"

namespace parley::log::rocksdb_backend {

// kCorruption naming the first table file (*.sst) in `directory` whose
// metaindex or properties block is damaged, or whose footer is whole (its
// magic number in place) but malformed; kIoError when one cannot be read.
// A file without a whole footer is passed over: RocksDB was writing it
// (a crash, a power cut, a live writer) and judges it itself, safely.
Result<void> check_table_files(const std::filesystem::path& directory);

// The same for one table file.
Result<void> check_table_file(const std::filesystem::path& file);

}  // namespace parley::log::rocksdb_backend
