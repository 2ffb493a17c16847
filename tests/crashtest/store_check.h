// What the crash campaign checks on a store after each kill (see
// tests/crashtest/crash_campaign.h), and what it remembers about the store
// between its generations.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "replay/folded_store.h"
#include "tests/crashtest/ack_channel.h"

namespace parley::crashtest {

struct StoreHistory {
  std::filesystem::path dir;
  std::vector<std::vector<AckedToken>> generations;  // acks per child
  std::vector<IdempotentPost> idempotent;
  std::int64_t clock_micros = 0;  // the latest clock a child reported
  std::string followed_channel;   // a channel a follower may follow
  // Folded generation by generation (FoldedStore::advance).
  std::unique_ptr<replay::FoldedStore> incremental;
};

// What a `parley log show CHANNEL -f -o jsonl` follower printed.
struct FollowerRun {
  std::string channel;
  std::string output;
  int status = 0;  // waitpid status after SIGTERM
};

struct StoreCheck {
  bool opened = false;  // false: the store did not open (problems say why)
  std::uint64_t records = 0;
  std::uint64_t acked = 0;
  std::uint64_t lost = 0;
  std::uint64_t duplicated = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t audit_failures = 0;
  std::uint64_t followed_envelopes = 0;
  std::uint64_t idempotent_retries = 0;
  bool torn_tail = false;
  std::vector<std::string> problems;
};

// What a store reopened after its hub stopped holds, against `live`, the
// hub's log as its store read it just before it closed.
struct PrefixCheck {
  bool opened = false;     // false: the store did not open (problems say why)
  bool read_back = false;  // the whole log read back
  bool torn_tail = false;
  std::vector<std::string> survivors;  // the tokens of what the store holds
  // Records of `live` the store no longer holds, and records behind
  // `live`'s end (batches the hub saw fail whose bytes reached the disk).
  std::uint64_t dropped = 0;
  std::uint64_t beyond = 0;
  std::vector<std::string> problems;  // a record differs; a fold differs
};

// Opens `dir` read-write and reads it whole. With `live`: the store must
// hold a prefix of it byte for byte, possibly followed by more records,
// and folding what it holds of `live` must hash as folding that prefix of
// `live` does (the reference fold).
PrefixCheck check_prefix(const std::filesystem::path& dir,
                         const std::vector<std::string>* live);

// Reopens history.dir and checks it; re-sends up to `retries` acknowledged
// idempotent posts through a Hub opened on it. `parley` runs `parley
// audit`. Advances history.incremental.
StoreCheck check_store(StoreHistory& history,
                       const std::optional<FollowerRun>& follower,
                       const std::filesystem::path& parley, int retries,
                       std::mt19937_64& random);

}  // namespace parley::crashtest
