// The soak (parley-soak): `parley serve` under the workload of
// tests/soak/soak_workload.h for a bounded time, restarted (SIGTERM drain,
// start again on the same store and port) every `restart_every` seconds,
// with `parley log show -f` following the talk conversation from another
// process throughout. Every `sample_every` seconds it samples the server's
// and the follower's resident memory, the hub's gauges (/metrics) and the
// acked talk posts. At the end it checks:
//   - no call failed outside a restart, and every server exited 0;
//   - every talk post the hub acked is in the log exactly once (none lost,
//     none duplicated), and the follower printed exactly what a fresh
//     `parley log show` of the finished store prints;
//   - `parley audit` finds the store clean;
//   - throughput did not decay: once the load is over, rounds of the same
//     workload alternate between the soaked server (still running) and a
//     fresh one on an empty store (tests/soak/throughput_probe.h); the
//     soaked one's median rate is at least half the fresh one's;
//   - memory stayed flat: the server's heap without its log store's block
//     cache (/metrics, at its lowest in the second half of a generation)
//     in the last generation exceeds the first generation's by at most
//     8 MiB plus 4 KiB per channel created in between (a closed channel's
//     state stays in the fold, as AG2 keeps it); the follower's resident
//     memory (it folds the same state) by at most 16 MiB plus its 32 MiB
//     block cache plus 4 KiB per channel;
//   - per-agent bookkeeping is bounded: the hub's registered agents are
//     the workload's (throw-away agents gone).
// The server runs with `memtable_bytes` RocksDB memtables, small enough
// that they fill and flush many times in a run: memory measured after the
// first flushes is the hub's, not a memtable still filling.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace parley::soak {

struct SoakOptions {
  std::string parley;         // the parley binary
  std::filesystem::path dir;  // scratch, emptied first
  double seconds = 60;
  double restart_every = 20;
  double sample_every = 2;
  int window = 4;
  int cycle_pause_ms = 100;
  int probe_pairs = 3;  // throughput rounds per server
  double probe_seconds = 3;
  std::size_t memtable_bytes = 1 << 20;
  bool verbose = false;  // the clients' own log lines too
};

// Prints a line per sample on stderr and one JSON summary line on stdout;
// returns 0 when every check held, 1 when one failed.
int run_soak(const SoakOptions& options);

}  // namespace parley::soak
