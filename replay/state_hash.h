// A stable fingerprint of folded state, so "the same log gives the same
// state" can be checked: two folds, a fold before and after a restart, a
// live hub and `parley replay`.
//
// The hash is 64-bit FNV-1a over a canonical text, printed as 16 lowercase
// hex digits. The canonical text of one channel is these lines, in order:
//   metadata <AG2 channel metadata JSON, sorted keys, compact>
//   adapter_state <the adapter's AG2 state JSON, or null when dormant>
//   last_sequence <the last per-channel sequence folded>
//   causation <sender_id> <causation_id> <sequence>   (one line per entry
//                                                      of the causation
//                                                      index, sorted)
// So it covers lifecycle (state, pending_acks, rejected_by, closed_at,
// close_reason), participants, manifest, knobs, labels, adapter state and
// the causation index. The store's canonical text is, for each agent in
// registration order, "agent <passport> <resume> <rule> <skill_md or null>"
// followed by its cursors ("cursor <channel> <envelope id>"), observed
// tasks ("observed <task id>") and a remote_agent's owners ("owner <agent
// id>"), then for each channel in creation order
// "channel <id> <channel hash>", then "largest_envelope_id <id>".
// Pure functions; callable from any thread on state nobody is changing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/channels/channel_table.h"
#include "engine/state/hub_state.h"

namespace parley::replay {

std::uint64_t fnv1a64(std::string_view bytes);
// 16 lowercase hex digits.
std::string hash_hex(std::uint64_t hash);

std::string canonical_channel_text(const engine::ChannelEntry& channel);
std::uint64_t channel_state_hash(const engine::ChannelEntry& channel);

std::string canonical_store_text(const engine::HubState& state);
std::uint64_t store_state_hash(const engine::HubState& state);

}  // namespace parley::replay
