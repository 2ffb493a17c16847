// parley-soak: a bounded soak of `parley serve` (tests/soak/soak_run.h).
// Prints a line per sample on stderr and one JSON summary line on stdout;
// exits 1 when a check failed.
//
//   parley-soak --data DIR [--seconds 60] [--restart-every 20]
//               [--sample-every 2] [--window 4] [--cycle-pause-ms 100]
//               [--memtable-bytes 1048576] [--probe-pairs 3]
//               [--probe-seconds 3] [-v]
#include <CLI/CLI.hpp>
#include <iostream>

#include "tests/soak/soak_run.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Runs parley serve under load on every channel type, with restarts "
      "and a live log follower, and checks that memory stays flat, "
      "throughput does not decay and nothing acked is lost."};
  parley::soak::SoakOptions options;
  std::string dir;
  app.add_option("--data", dir, "scratch directory (emptied first)")
      ->required();
  app.add_option("--seconds", options.seconds, "how long the load runs")
      ->check(CLI::PositiveNumber);
  app.add_option("--restart-every", options.restart_every,
                 "seconds between server restarts")
      ->check(CLI::PositiveNumber);
  app.add_option("--sample-every", options.sample_every,
                 "seconds between samples")
      ->check(CLI::PositiveNumber);
  app.add_option("--window", options.window, "talk posts in flight per poster")
      ->check(CLI::PositiveNumber);
  app.add_option("--cycle-pause-ms", options.cycle_pause_ms,
                 "pause between two cycles of a kind")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--memtable-bytes", options.memtable_bytes,
                 "the server's RocksDB memtable size")
      ->check(CLI::PositiveNumber);
  app.add_option("--probe-pairs", options.probe_pairs,
                 "throughput rounds on each of the soaked and a fresh server")
      ->check(CLI::PositiveNumber);
  app.add_option("--probe-seconds", options.probe_seconds,
                 "seconds of load per throughput round")
      ->check(CLI::PositiveNumber);
  app.add_option("--parley", options.parley, "the parley binary")
      ->default_val(PARLEY_BINARY);
  app.add_flag("-v,--verbose", options.verbose, "the clients' log lines too");
  CLI11_PARSE(app, argc, argv);
  options.dir = dir;
  try {
    return parley::soak::run_soak(options);
  } catch (const std::exception& e) {
    std::cerr << "parley-soak: " << e.what() << '\n';
    return 1;
  }
}
