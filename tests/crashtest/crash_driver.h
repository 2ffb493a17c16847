// The child side of the crash campaign: opens a hub on a store and drives
// a random mix of every kind of mutation through the op layer until it is
// killed (or has run `max_ops` ops), reporting on stdout every record the
// hub acknowledged (tests/crashtest/ack_channel.h).
//
// One thread drives the hub; invitees answer their invites on it, inside
// create_channel, as AG2's HumanClient does. Every mutation carries a mark
// no other carries (tests/crashtest/record_token.h), so the parent finds it
// in the log by scanning.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "log/log_store.h"

namespace rocksdb {
class Env;
}
namespace parley::engine {
class Hub;
}

namespace parley::crashtest {

struct DriverOptions {
  std::filesystem::path data;
  int generation = 0;
  std::uint64_t seed = 0;
  // Where the hub's manual clock starts (microseconds since the epoch); 0:
  // 2026-01-01T00:00:00+00:00.
  std::int64_t clock_micros = 0;
  // Self-test faults: "lose" acks a post that was never made, "duplicate"
  // appends a second copy of an acknowledged record behind the hub's back,
  // "ack-failed" (with report_failures) acks every op that failed.
  std::string inject;
  // 0: run until killed. Otherwise stop after this many ops and print
  // per-op counts on stderr.
  std::int64_t max_ops = 0;
  // Where the report lines go (without newline); empty: stdout, through
  // send_line.
  std::function<void(std::string_view)> sink;
  // The store's Env (not owned) and durability.
  rocksdb::Env* env = nullptr;
  log::Durability durability = log::Durability::kSync;
  // The store's memtable size (log::RocksDbOptions); 0: RocksDB's default.
  std::size_t write_buffer_size = 0;
  // When given, the driver stops between two ops once it is set.
  const std::atomic<bool>* stop = nullptr;
  // Called with the hub's store once the driver stops, before it closes the
  // hub (not when the hub never opened).
  std::function<void(const log::LogStore&)> before_close;
  // The I/O fault campaign (tests/crashtest/fault_campaign.h): reports
  //   open-failed <message>    the store or the hub did not open
  //   fail <op> <message>      an op failed with ErrorKind::kStorage
  // and calls `after_op` on the driver's thread after every op (its acks
  // and fail lines already sent); driving stops when it returns false.
  bool report_failures = false;
  std::function<bool(engine::Hub&)> after_op;
};

// Returns the process exit status: 0 after max_ops, 1 when the store or
// the hub does not open.
int run_driver(const DriverOptions& options);

}  // namespace parley::crashtest
