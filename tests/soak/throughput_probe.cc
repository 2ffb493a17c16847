#include "tests/soak/throughput_probe.h"

#include <thread>

namespace parley::soak {
namespace {

using Clock = std::chrono::steady_clock;

// One round: a new workload on `load.url` for `length`; its talk posts
// acked per second of load.
double run_round(const boost::asio::any_io_executor& executor,
                 WorkloadOptions load, std::chrono::milliseconds length,
                 int round, std::vector<std::string>& failures) {
  std::unique_ptr<Workload> workload = Workload::start(executor, load);
  const auto began = Clock::now();
  workload->run();
  std::this_thread::sleep_for(length);
  const double posts = static_cast<double>(workload->counts().talk_posts);
  const double seconds =
      std::chrono::duration<double>(Clock::now() - began).count();
  const std::string label = "round " + std::to_string(round) + ": ";
  if (!workload->stop(std::chrono::seconds(30))) {
    failures.push_back(label + "calls still in flight 30 s after it ended");
  }
  for (const std::string& failure : workload->unexpected()) {
    failures.push_back(label + failure);
  }
  return posts / seconds;
}

}  // namespace

ProbeRates probe_throughput(const boost::asio::any_io_executor& executor,
                            const std::string& soaked_url,
                            const std::string& fresh_url,
                            const ProbeOptions& options) {
  ProbeRates rates;
  int round = 0;
  for (int pair = 0; pair < options.pairs; ++pair) {
    const bool soaked_first = pair % 2 == 0;
    for (const bool soaked : {soaked_first, !soaked_first}) {
      WorkloadOptions load = options.load;
      load.url = soaked ? soaked_url : fresh_url;
      load.name_prefix = "probe" + std::to_string(++round) + "-";
      const double rate =
          run_round(executor, load, options.round, round, rates.failures);
      (soaked ? rates.soaked : rates.fresh).push_back(rate);
    }
  }
  return rates;
}

}  // namespace parley::soak
