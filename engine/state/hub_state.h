// Everything a hub knows, folded from its log: the registry, the channels
// with their adapter states and causation indexes, the tasks, and the
// envelope-id floor. apply() is the one fold both hydrate and the live
// writer use, so a reopened hub is exactly the hub that was closed.
//
// Thread safety: none; the hub guards it (one writer, shared readers).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/adapters/adapter_registry.h"
#include "engine/base/error.h"
#include "engine/channels/channel_table.h"
#include "engine/expectations/expectation_ledger.h"
#include "engine/registry/registry.h"
#include "engine/tasks/task_table.h"

namespace parley::schema {
struct AgentUpdated;
}  // namespace parley::schema

namespace parley::engine {

class HubState {
 public:
  // `adapters` must outlive the state.
  explicit HubState(const AdapterRegistry& adapters) : adapters_(adapters) {}

  // Folds one record that passed the FlatBuffers Verifier. Fails with
  // kStorage naming `log_sequence` when its payload does not decode.
  Result<void> apply(std::uint64_t log_sequence, std::string_view record);

  // Forgets everything folded, as before the first record.
  void reset();

  Registry registry;
  ChannelTable channels;
  TaskTable tasks;
  std::string largest_envelope_id;  // the id floor for the minter
  ExpectationLedger expectations;   // fired (expectation, violator) keys

 private:
  Result<void> apply_legacy_agent_update(std::uint64_t log_sequence,
                                         const schema::AgentUpdated& updated);
  Result<void> apply_channel_created(std::uint64_t log_sequence,
                                     std::span<const std::uint8_t> metadata);

  const AdapterRegistry& adapters_;
  // The audience of the envelope being folded, reused so a fold does not
  // allocate.
  std::vector<std::string_view> audience_;
};

}  // namespace parley::engine
