// A memtable for a column family whose keys are written in ascending order
// (the log's be64 sequences): an insert appends to an array, a read
// binary-searches it.
//
// RocksDB's skiplist memtable pays for every insert with a search and, in a
// build with assertions on (Debian's librocksdb is one), with two more
// comparisons per level of the list after it; here an insert is one
// comparison with the last key. A key that arrives out of order (Parley never
// writes one; kept correct for whatever RocksDB may replay) makes every later
// iterator sort a copy of the entries, so reads stay right, only slower.
#pragma once

#include <memory>

namespace rocksdb {
class MemTableRepFactory;
}

namespace parley::log::rocksdb_backend {

std::shared_ptr<rocksdb::MemTableRepFactory> make_append_memtable_factory();

}  // namespace parley::log::rocksdb_backend
