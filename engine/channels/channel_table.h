// The folded channels of a hub: metadata projected from the log, adapter state,
// and the causation index. Pure state: the hub folds log records into it, on
// hydrate and live alike, through apply_envelope().
//
// Thread safety: none; the hub guards it (one writer, shared readers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/adapters/channel_adapter.h"
#include "engine/base/envelope.h"
#include "engine/channels/channel.h"
#include "engine/channels/channel_activity.h"
#include "log/string_map.h"

namespace parley::engine {

// What the channel fold reads of one logged envelope.
struct LoggedEnvelope {
  EnvelopeView view;
  std::string_view created_at;
  std::optional<std::string_view> causation_id;
  // nullopt: everyone in the channel.
  std::optional<std::span<const std::string_view>> audience;
  bool hub_authored = false;
  std::uint64_t sequence = 0;  // per-channel
  // `reason` of a hub-authored closed/expired envelope.
  std::string_view close_reason;
};

struct ChannelEntry {
  ChannelMetadata metadata;
  // Both null while the channel is dormant: its adapter type is not
  // registered; it stays readable, and posts fail until the type is
  // registered and the hub reopened.
  std::shared_ptr<const ChannelAdapter> adapter;
  std::unique_ptr<AdapterState> state;
  std::uint64_t last_sequence = 0;
  // (sender_id, causation_id) -> the per-channel sequence of the latest
  // envelope with that key, so it is read back without a scan; empty once
  // the channel is terminal.
  std::map<std::pair<std::string, std::string>, std::uint64_t, std::less<>>
      causation;
  // What the expectation sweep reads; empty once the channel is terminal.
  ChannelActivity activity;
};

class ChannelTable {
 public:
  ChannelEntry& add(ChannelEntry entry);
  ChannelEntry* find(std::string_view channel_id);
  const ChannelEntry* find(std::string_view channel_id) const;

  // Folds one logged envelope into its channel: invitees' acks and rejects
  // while pending, the hub's own opened/closed/expired envelopes, the
  // adapter state, the causation index and the activity. Envelopes that
  // are not the hub's change no lifecycle state, whatever their event type.
  static void apply_envelope(ChannelEntry& channel,
                             const LoggedEnvelope& envelope);

  // Channels in creation order.
  const std::vector<ChannelEntry*>& in_order() const { return order_; }

 private:
  log::StringMap<std::unique_ptr<ChannelEntry>> channels_;
  std::vector<ChannelEntry*> order_;
};

}  // namespace parley::engine
