// A memtable for the channel index (rocksdb_layout.h: keys u8 n | channel
// id (n) | be64 sequence), partitioned by channel: each channel's entries
// append to an array of their own, as the log's memtable does
// (rocksdb_append_memtable.h), and a directory orders the channels.
//
// RocksDB's skiplist memtable pays for every insert with a search through
// the whole memtable, its keys far apart in memory, and in a build with
// assertions on (Debian's librocksdb is one) with more comparisons per
// level after it, even with an insert hint. A group of appends writes one
// entry per channel it wrote to, each after that channel's last: here an
// insert is a hash lookup of the channel and one comparison with its last
// entry. A channel's entry out of order (Parley never writes one; kept
// correct for whatever RocksDB may replay) makes a reader sort a copy of
// that channel's entries.
//
// The column family must use RocksDB's default bytewise comparator: the
// directory orders channels by their key prefixes' bytes.
#pragma once

#include <memory>

namespace rocksdb {
class MemTableRepFactory;
}

namespace parley::log::rocksdb_backend {

std::shared_ptr<rocksdb::MemTableRepFactory> make_channel_memtable_factory();

}  // namespace parley::log::rocksdb_backend
