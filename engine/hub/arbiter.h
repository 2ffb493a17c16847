// The hub's decision seam: every access and limit decision of the post
// pipeline, channel creation and dispatch asks one Arbiter. The base class
// allows everything (AG2's BaseHub arbiter); RuleBasedArbiter, the default,
// enforces the senders' and recipients' Rules.
//
// Contract: the hub calls an arbiter with its own locks held (the writer
// lock, and the state lock for authorize_dispatch), so calls are
// serialised and an arbiter must not call back into the hub. The records
// and registry passed in are valid only during the call. A refusal is an
// Error whose kind and message reach the caller unchanged (AG2's deny
// carries a reason and an error class; access_denied unless told).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/registry/registry.h"

namespace parley::engine {

class Arbiter {
 public:
  virtual ~Arbiter() = default;

  // Post step 2, and every invite create_channel writes: may `sender` send
  // `envelope`? Runs before the channel is looked up (LIM-04).
  virtual Result<void> authorize_send(const Registry& registry,
                                      const AgentRecord& sender,
                                      const Envelope& envelope) const;
  // Post step 7, for each registered intended recipient of a substantive
  // envelope but the sender: `pending` is the recipient's count of
  // substantive deliveries it has not answered yet.
  virtual Result<void> authorize_inbox(const AgentRecord& recipient,
                                       const Envelope& envelope,
                                       std::int64_t pending) const;
  // Per recipient of every delivery; false skips it silently.
  virtual bool authorize_dispatch(const Registry& registry,
                                  const Envelope& envelope,
                                  const AgentRecord& recipient) const;
  // create_channel step 6: `invitees` are the participants but the creator;
  // `open_channels` counts the creator's non-terminal channels.
  virtual Result<void> authorize_channel_open(
      const AgentRecord& creator, std::span<const AgentRecord* const> invitees,
      std::int64_t open_channels) const;
  // Defined for AG2 parity; like AG2's hub, Parley never calls it.
  virtual Result<void> authorize_register(const Passport& passport) const;
  // An audience id that names no registered agent (federation): the ids to
  // deliver to instead, or nullopt to drop it silently (the default).
  virtual std::optional<std::vector<std::string>> resolve_unknown_audience(
      const Envelope& envelope, std::string_view unknown_id) const;
};

// The default: AG2's rule checks with AG2's exact messages.
//  send: every registered explicit-audience member but the sender must
//        match the sender's access.outbound_to (by name); then
//        envelope.depth must not exceed limits.delegation_depth (0 = off).
//  inbox: refused with kInboxFull when inbox.max_pending > 0 and
//        pending >= max_pending.
//  dispatch: the recipient's access.inbound_from must match the sender's
//        name (an unregistered sender matches by its id).
//  channel open: every invitee's inbound_from must match the creator's
//        name, and open_channels must stay below max_concurrent_channels
//        (0 = unlimited).
class RuleBasedArbiter : public Arbiter {
 public:
  Result<void> authorize_send(const Registry& registry,
                              const AgentRecord& sender,
                              const Envelope& envelope) const override;
  Result<void> authorize_inbox(const AgentRecord& recipient,
                               const Envelope& envelope,
                               std::int64_t pending) const override;
  bool authorize_dispatch(const Registry& registry, const Envelope& envelope,
                          const AgentRecord& recipient) const override;
  Result<void> authorize_channel_open(
      const AgentRecord& creator, std::span<const AgentRecord* const> invitees,
      std::int64_t open_channels) const override;
};

}  // namespace parley::engine
