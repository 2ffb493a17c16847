// parley-crashtest: the hub-level crash campaign (tests/crashtest/
// crash_campaign.h). Prints one JSON line of totals and exits 1 when
// anything acknowledged was lost or duplicated or an audit failed.
//
//   parley-crashtest --data DIR --trials N [--seed S]
//   parley-crashtest --data DIR --trials N --power-cut sync|async
//   parley-crashtest --data DIR --trials N --faults
//
// Run with --child, it is the child a trial kills (crash_driver.h).
#include <CLI/CLI.hpp>
#include <iostream>
#include <random>

#include "tests/crashtest/crash_campaign.h"
#include "tests/crashtest/crash_driver.h"
#include "tests/crashtest/fault_campaign.h"
#include "tests/crashtest/power_campaign.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Kills hubs with SIGKILL at random moments and checks that "
      "nothing they acknowledged is lost or duplicated."};
  parley::crashtest::CampaignOptions campaign;
  parley::crashtest::DriverOptions driver;
  bool child = false;
  std::uint64_t seed = std::random_device{}();
  std::string data;
  app.add_option("--data", data, "scratch directory (emptied first)")
      ->required();
  app.add_option("--trials", campaign.trials, "kills to run")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "random seed (printed to stderr)");
  app.add_option("--generations-per-store", campaign.generations_per_store,
                 "trials on one store before a fresh one")
      ->check(CLI::PositiveNumber);
  app.add_option("--parley", campaign.parley, "the parley binary")
      ->default_val(PARLEY_BINARY);
  app.add_option("--ag2", campaign.ag2,
                 "AG2 store that import-ag2 trials import ('' for none)")
      ->default_val(PARLEY_AG2_STORE);
  app.add_option("--inject", campaign.inject,
                 "self-test: 'lose' fakes an ack, 'duplicate' writes an "
                 "acknowledged record twice, 'unsynced-acks' (with "
                 "--power-cut sync) drives the hub without syncs, "
                 "'ack-failed' (with --faults) acks every failed op")
      ->check(
          CLI::IsMember({"lose", "duplicate", "unsynced-acks", "ack-failed"}));
  app.add_flag("-v,--verbose", campaign.verbose, "one line per trial");
  std::string power_cut;
  app.add_option("--power-cut", power_cut,
                 "simulated power losses instead of kills, with this "
                 "durability")
      ->check(CLI::IsMember({"sync", "async"}));
  bool faults = false;
  app.add_flag("--faults", faults,
               "I/O faults (ENOSPC, EIO) injected into a serving hub's "
               "store instead of kills")
      ->excludes("--power-cut");
  app.add_flag("--child", child, "run as a trial's child")->group("");
  app.add_option("--generation", driver.generation)->group("");
  app.add_option("--clock", driver.clock_micros)->group("");
  app.add_option("--max-ops", driver.max_ops)->group("");
  CLI11_PARSE(app, argc, argv);

  if (child) {
    driver.data = data;
    driver.seed = seed;
    driver.inject = campaign.inject;
    return parley::crashtest::run_driver(driver);
  }
  std::cerr << "parley-crashtest: seed " << seed << "\n";
  campaign.data = data;
  campaign.seed = seed;
  campaign.self = std::filesystem::canonical("/proc/self/exe");
  try {
    if (faults) {
      const auto totals = parley::crashtest::run_fault_campaign(campaign);
      std::cout << parley::crashtest::fault_totals_json(totals) << std::endl;
      return totals.failed() ? 1 : 0;
    }
    const auto totals =
        power_cut.empty()
            ? parley::crashtest::run_campaign(campaign)
            : parley::crashtest::run_power_campaign(
                  campaign, power_cut == "sync"
                                ? parley::log::Durability::kSync
                                : parley::log::Durability::kAsync);
    std::cout << parley::crashtest::totals_json(totals, !power_cut.empty())
              << std::endl;
    return totals.failed() ? 1 : 0;
  } catch (const std::exception& error) {
    std::cerr << "parley-crashtest: " << error.what() << "\n";
    return 2;
  }
}
