// `parley audit`: an offline check of a whole store.
//
// What it checks, each problem named with its channel and sequence:
//   * every stored record passes the FlatBuffers Verifier and carries the
//     log sequence it is stored under;
//   * log sequences are dense (1..N, no gap) and end at last_sequence();
//   * each channel's sequences are dense, in the records' stamps and in the
//     channel index;
//   * the channel index matches a full scan of the log: every entry points
//     at a record of that channel stamped with that channel sequence, and
//     every record stamped with a channel sequence has its entry;
//   * every idempotency-index entry points at a stored envelope posted with
//     that key: the index key is engine::post_idempotency_key of the
//     envelope's channel, sender and idempotency_key; at most one key per
//     record;
//   * folding the log twice (engine::HubState::apply, the hub's own fold)
//     gives the same state hash, and each channel folded alone (its
//     ChannelCreated record, then its envelopes through the channel index,
//     with its ExpectationFired records in log order among them) gives the
//     channel state hash of the full fold;
//   * the folded state equals what the engine reports: a Hub opened on a
//     copy of the log (its own hydrate) answers get_channel, adapter_state,
//     get_agent, get_resume, get_rule, get_skill and inbox_cursor with the
//     folded values. Channels the fold leaves pending are expected back
//     expired with reason "hydrate_orphaned_pending" (the hub expires them
//     on open), and their adapter state is not compared.
//
// Reads only; never writes to `store`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/error.h"
#include "log/log_store.h"

namespace parley::replay {

struct AuditProblem {
  std::string channel;                 // empty: not about one channel
  std::string channel_type;            // the channel's manifest type, if known
  std::uint64_t channel_sequence = 0;  // 0: not about one envelope
  std::uint64_t log_sequence = 0;      // 0: not about one record
  std::string what;
};

struct AuditReport {
  std::uint64_t records = 0;     // entries of the log, as stored
  std::uint64_t channels = 0;    // channels audited
  std::uint64_t state_hash = 0;  // of the folded state (0: the fold failed)
  std::vector<AuditProblem> problems;
  bool clean() const { return problems.empty(); }
};

struct AuditOptions {
  // Only these channels' problems are reported (and problems about no
  // channel are left out); empty: the whole store.
  std::vector<std::string> channels;
};

// Fails only when the store cannot be read at all; everything wrong inside
// it is a problem in the report.
engine::Result<AuditReport> audit_store(const log::LogStore& store,
                                        const AuditOptions& options = {});

// "channel C (conversation), sequence 4, log sequence 12: what".
std::string describe(const AuditProblem& problem);

}  // namespace parley::replay
