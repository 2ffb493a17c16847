// The soak's throughput verdict: does a hub that has carried the soak's
// load (its whole state, its process still running) post as fast as a
// fresh one? Rounds of the soak's workload (tests/soak/soak_workload.h,
// with agents of their own) alternate between the two hubs, soaked and
// fresh in the order ABBAAB..., so that the machine's drift (the disk's
// sync latency and the host's CPU move 2-4x within a minute on a shared
// machine, and this load's rate follows them) falls on both alike. A rate
// sampled while the soak runs cannot tell such drift from a hub slowing
// down as its state grows; the interleaved comparison can.
//
// Threading: blocks the caller; the rounds run on `executor`'s thread(s).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "tests/soak/soak_workload.h"

namespace parley::soak {

struct ProbeOptions {
  int pairs = 3;                          // rounds per hub
  std::chrono::milliseconds round{3000};  // load per round
  WorkloadOptions load;  // each round sets its url and name_prefix
};

struct ProbeRates {
  std::vector<double> soaked;  // talk posts per second, per round
  std::vector<double> fresh;
  std::vector<std::string> failures;  // unexpected ones, "round N: ..."
};

// Throws std::runtime_error when a round's workload cannot start.
ProbeRates probe_throughput(const boost::asio::any_io_executor& executor,
                            const std::string& soaked_url,
                            const std::string& fresh_url,
                            const ProbeOptions& options);

}  // namespace parley::soak
