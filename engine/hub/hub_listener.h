// Observers of a hub: what happened, after it is durable.
//
// Contract: a hub tells its listeners about a change after the change's
// batch is durable in the log, outside every hub lock, on the thread that
// made the change, in the order the changes were staged. Several threads
// may call a listener at once. A listener that throws is reported on
// stderr and skipped; the change and the other listeners are unaffected
// (AUDIT-10). Hydrate tells nobody: it replays history, it does not make
// it.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/channels/channel.h"

namespace parley::engine {

class HubListener {
 public:
  virtual ~HubListener() = default;

  // An accepted post (not an invite ack or reject, not the hub's own
  // close or expire envelopes), after its deliveries.
  virtual void on_envelope_posted(const Envelope&, const ChannelMetadata&) {}
  // A post refused before it reached the log.
  virtual void on_envelope_rejected(const Envelope&, const Error&) {}
  virtual void on_dispatch_failed(const Envelope&,
                                  std::string_view /*recipient_id*/,
                                  std::string_view /*error*/) {}
  // kind: created {metadata, participants, at}; opened {metadata};
  // closed / expired {reason, metadata, at}.
  virtual void on_channel_event(std::string_view /*channel_id*/,
                                std::string_view /*kind*/,
                                const nlohmann::json& /*payload*/) {}
  // kind: registered {passport, at}; unregistered {name, at}; resume_set
  // {resume, version, at}; skill_set {removed, at}; rule_set {rule,
  // version, at}; observation_recorded {resume, version, capability,
  // outcome, at}.
  virtual void on_agent_event(std::string_view /*agent_id*/,
                              std::string_view /*kind*/,
                              const nlohmann::json& /*payload*/) {}
  virtual void on_expectation_fired(std::string_view /*channel_id*/,
                                    const nlohmann::json& /*expectation*/,
                                    const nlohmann::json& /*violation*/) {}
  virtual void on_turn_failed(std::string_view /*channel_id*/,
                              std::string_view /*agent_id*/,
                              std::string_view /*envelope_id*/,
                              std::string_view /*error*/) {}
  // A task's terminal transition (hub-driven expiry, or update_task; kind =
  // the new state, payload {owner_id, channel_id, reason, capability,
  // outcome, at}); fire_task_event (e.g. "mirror_failed").
  virtual void on_task_event(std::string_view /*task_id*/,
                             std::string_view /*kind*/,
                             const nlohmann::json& /*payload*/) {}
  virtual void on_inbox_pressure(std::string_view /*agent_id*/,
                                 std::int64_t /*pending*/,
                                 std::int64_t /*cap*/) {}
};

}  // namespace parley::engine
