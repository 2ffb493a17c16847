// Re-folds one channel from its log, up to a per-channel sequence, without
// a live hub: the channel's ChannelCreated record, then its envelopes in
// channel order, with its ExpectationFired records (a hide handler's hides)
// in log order among them, each through engine::HubState::apply (the hub's
// own fold). Up to sequence `at` means up to the record before envelope
// `at` + 1.
//
// Thread safety: none; a ChannelReplay is used on one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/adapters/adapter_registry.h"
#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/state/hub_state.h"
#include "log/log_store.h"

namespace parley::replay {

// Told after each envelope is folded: the envelope and the channel as it
// stands right after it.
using StepVisitor = std::function<void(const engine::Envelope& envelope,
                                       const engine::ChannelEntry& after)>;

class ChannelReplay {
 public:
  // Folds `channel_id` from `store` up to channel sequence `at` (all of it
  // for log::kLastSequence; 0 = as created, before any envelope). Fails
  // with kNotFound "channel not found: <id>" when the log holds no
  // ChannelCreated record for it, kStorage when the log is unreadable.
  static engine::Result<std::unique_ptr<ChannelReplay>> run(
      const log::LogStore& store, std::string_view channel_id,
      std::uint64_t at = log::kLastSequence, const StepVisitor& on_step = {});

  ChannelReplay(const ChannelReplay&) = delete;
  ChannelReplay& operator=(const ChannelReplay&) = delete;

  // The channel after the fold; metadata, adapter state, last_sequence.
  const engine::ChannelEntry& channel() const { return *channel_; }
  // The log sequence of the channel's ChannelCreated record.
  std::uint64_t created_at_log_sequence() const { return created_at_; }

 private:
  ChannelReplay();

  std::unique_ptr<engine::AdapterRegistry> adapters_;
  std::unique_ptr<engine::HubState> state_;        // refers to adapters_
  const engine::ChannelEntry* channel_ = nullptr;  // owned by state_
  std::uint64_t created_at_ = 0;
};

// The log sequence and bytes (8-byte aligned) of `channel_id`'s
// ChannelCreated record, found by a scan of the log; nullopt when absent.
struct CreatedRecord {
  std::uint64_t log_sequence = 0;
  std::vector<std::uint64_t> storage;
  std::size_t size = 0;
  std::string_view bytes() const {
    return {reinterpret_cast<const char*>(storage.data()), size};
  }
};
log::Result<std::optional<CreatedRecord>> find_channel_created(
    const log::LogStore& store, std::string_view channel_id);

}  // namespace parley::replay
