// Names the calling thread, as `top -H`, `perf`, `gdb` and
// /proc/<pid>/task/<tid>/comm show it. Linux keeps 15 bytes of a name;
// the rest is cut. Any thread; naming is best effort and never fails.
//
// Parley's own threads: parley-io (a server's WebSocket and
// admin I/O), parley-commit (the hub's committer), parley-log (its log
// writer), parley-sweep (TTL and expectation sweeps), parley-hydrate (the
// log reader while a hub opens a log longer than one batch), parley-tail (a
// follower of a store), parley-lease (a PostgreSQL writer's lease),
// parley-client (a C++ client's I/O). RocksDB names its own (rocksdb:high,
// rocksdb:low).
#pragma once

#include <string_view>

namespace parley::log {

void name_current_thread(std::string_view name);

}  // namespace parley::log
