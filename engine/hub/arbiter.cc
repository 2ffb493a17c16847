#include "engine/hub/arbiter.h"

#include <algorithm>

#include "engine/registry/glob.h"

namespace parley::engine {

namespace {

std::string quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

}  // namespace

Result<void> Arbiter::authorize_send(const Registry&, const AgentRecord&,
                                     const Envelope&) const {
  return {};
}

Result<void> Arbiter::authorize_inbox(const AgentRecord&, const Envelope&,
                                      std::int64_t) const {
  return {};
}

bool Arbiter::authorize_dispatch(const Registry&, const Envelope&,
                                 const AgentRecord&) const {
  return true;
}

Result<void> Arbiter::authorize_channel_open(
    const AgentRecord&, std::span<const AgentRecord* const>,
    std::int64_t) const {
  return {};
}

Result<void> Arbiter::authorize_register(const Passport&) const { return {}; }

std::optional<std::vector<std::string>> Arbiter::resolve_unknown_audience(
    const Envelope&, std::string_view) const {
  return std::nullopt;
}

Result<void> RuleBasedArbiter::authorize_send(const Registry& registry,
                                              const AgentRecord& sender,
                                              const Envelope& envelope) const {
  const Rule& rule = sender.rule;
  if (envelope.audience) {
    for (const auto& recipient_id : *envelope.audience) {
      if (recipient_id == sender.agent_id()) continue;
      const AgentRecord* recipient = registry.find(recipient_id);
      if (!recipient) continue;
      if (!matches_any(rule.access.outbound_to, recipient->passport.name)) {
        return access_denied("sender " + quoted(sender.passport.name) +
                             " not permitted to send to " +
                             quoted(recipient->passport.name));
      }
    }
  }
  const std::int64_t cap = rule.limits.delegation_depth;
  if (cap > 0 && envelope.depth > cap) {
    return access_denied("sender " + quoted(sender.passport.name) +
                         " exceeded delegation_depth (" +
                         std::to_string(envelope.depth) + " > " +
                         std::to_string(cap) + ")");
  }
  return {};
}

Result<void> RuleBasedArbiter::authorize_inbox(const AgentRecord& recipient,
                                               const Envelope&,
                                               std::int64_t pending) const {
  const std::int64_t max = recipient.rule.limits.inbox_max_pending;
  if (max > 0 && pending >= max) {
    return fail(ErrorKind::kInboxFull,
                "recipient " + quoted(recipient.agent_id()) +
                    " inbox at capacity (" + std::to_string(pending) +
                    " >= " + std::to_string(max) + ")");
  }
  return {};
}

bool RuleBasedArbiter::authorize_dispatch(const Registry& registry,
                                          const Envelope& envelope,
                                          const AgentRecord& recipient) const {
  const std::vector<std::string>& inbound = recipient.rule.access.inbound_from;
  // `*` (the default) admits every sender, whatever its name.
  if (std::ranges::find(inbound, "*") != inbound.end()) return true;
  const AgentRecord* sender = registry.find(envelope.sender_id);
  return matches_any(inbound, sender ? std::string_view(sender->passport.name)
                                     : std::string_view(envelope.sender_id));
}

Result<void> RuleBasedArbiter::authorize_channel_open(
    const AgentRecord& creator, std::span<const AgentRecord* const> invitees,
    std::int64_t open_channels) const {
  for (const AgentRecord* invitee : invitees) {
    if (!matches_any(invitee->rule.access.inbound_from,
                     creator.passport.name)) {
      return access_denied("invitee " + quoted(invitee->passport.name) +
                           " does not accept inbound from " +
                           quoted(creator.passport.name));
    }
  }
  const std::int64_t max = creator.rule.limits.max_concurrent_channels;
  if (max > 0 && open_channels >= max) {
    return access_denied("creator " + quoted(creator.agent_id()) +
                         " exceeded max_concurrent_channels (" +
                         std::to_string(open_channels) +
                         " >= " + std::to_string(max) + ")");
  }
  return {};
}

}  // namespace parley::engine
