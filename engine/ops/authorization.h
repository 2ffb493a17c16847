// Authorization of wire requests. A request that comes over the wire
// carries a Caller (the agents bound to its connection); before the hub
// runs it, the op is looked up in one classification table
// (authorization.cc, one entry per op) and checked against those agents:
//
//   unscoped      register and the discovery reads; allowed before any
//                 agent is bound
//   agent         the agent a param names must be bound
//   channel       some bound agent must be a participant of the channel
//   task          some agent must be bound, and the task's owner (observed
//                 task) or one of its checkpoint writers (unobserved task
//                 whose checkpoint was claimed) must be bound; the first
//                 wire checkpoint of an unobserved, unclaimed id claims it
//                 for the connection's agents
//   task reads    get_task and list_tasks show only the tasks the
//                 connection may see
//   operator      Parley's hub-admin ops; refused over the wire
//
// An op the table does not classify is refused as an unknown op, so a new
// op is unreachable over the wire until it is classified. In-process
// callers pass no Caller and are never checked.
//
// Thread safety: every function may run on any thread. Hub state is read
// through the hub's read API (its shared lock, one read at a time), so a
// check sees the hub as of that read; the task rule, which a concurrent
// claim or observe could change, the hub checks again in the same hold of
// its lock as the read or change it guards.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/error.h"
#include "engine/hub/hub.h"
#include "engine/ops/caller.h"

namespace parley::engine {

struct WireOptions {
  // Whether `register` may create a remote_agent over the wire. Off by
  // default: a remote_agent's auth scheme is a routing label that
  // registration never validates, so any client could otherwise take a
  // real agent's unused name and receive its traffic.
  bool allow_remote_agent_registration = false;
};

// The wire side of one request, for the checks and for the ops that behave
// differently over the wire (null for in-process calls). Lives for the
// duration of the call.
struct WireRequest {
  // The agents bound to the caller's connection when the request arrived
  // (Caller::bound_agents(), read once): sorted, unique. Every check of
  // the request uses this one snapshot.
  std::vector<std::string> agents;
  const WireOptions& options;
};

enum class WireScope {
  kUnscoped,
  kAgent,
  kChannel,
  kTask,
  kTaskReads,
  kOperator,
};

// The scope of `op` over the wire, or nullopt when the table does not
// classify it.
std::optional<WireScope> wire_scope(std::string_view op);

// Checks `op` with `params` (a JSON object) against `request` before it
// runs. Fails with protocol_error "unknown control-plane op: '<op>'" when
// the op is unclassified, with access_denied when the connection may not
// make the request, with protocol_error for what the wire may not carry
// (a malformed task id, a hub-only event type, an audience outside the
// channel), or with the error the op itself would give for a missing or
// mistyped param the check needs.
Result<void> authorize(const Hub& hub, const WireRequest& request,
                       std::string_view op, const nlohmann::json& params);

// authorize(hub, request, "post_envelope", params) for an envelope already
// parsed (the server's hot path), with `request` holding `caller`'s
// bindings: the same checks, the same errors.
Result<void> authorize_post(const Hub& hub, const Caller& caller,
                            const Envelope& envelope);

// --- Pieces the ops use over the wire --------------------------------------

// Whether `agents` holds a participant of `channel`.
bool has_participant(const ChannelMetadata& channel,
                     const std::vector<std::string>& agents);

// Whether the connection sees `task`: it holds the task's owner or a
// participant of the task's channel; a task without a channel is seen by
// its owner only.
bool sees_task(const Hub& hub, const WireRequest& request,
               const TaskMetadata& task);

// The owners a remote_agent registered on this request gets: the bound
// agents that are registered and not remote agents themselves, sorted.
std::vector<std::string> remote_agent_owners(const Hub& hub,
                                             const WireRequest& request);

// The wire's rules of a mirror_failed report, once the op has validated
// and clipped its payload (a string owner_id included): the owner_id must
// be bound; for an unobserved task a channel_id, when given, must be a
// channel the owner takes part in (access_denied "task owner is not a
// participant of channel '<id>'"). That an observed task's report carries
// the task's own owner and channel the op checks for every caller.
Result<void> authorize_mirror_failed(const Hub& hub, const WireRequest& request,
                                     std::string_view task_id,
                                     const nlohmann::json& payload);

// A passport as the wire shows it: auth.claim is always {} (a
// remote_agent's claim is routing data, kept in-process only).
Passport wire_passport(Passport passport);

// --- Hello ---------------------------------------------------------------

// The remote_agent rule of a Hello that names `agent_id` (already resolved
// from the Hello's name). Returns true when it is a remote_agent and
// `caller` holds one of its owners: the server binds it without running an
// auth adapter, whose scheme is only a routing label for it. Returns false
// when it is not a remote_agent: the server validates the claim with the
// scheme it registered with. Fails with not_found "agent not registered:
// <id>" for an unknown id and with auth_failed "remote agent '<name>'
// re-attaches only alongside its owner" otherwise (a remote_agent
// registered in-process has no owners and is never re-attached).
Result<bool> admit_remote_agent_hello(const Hub& hub, const Caller& caller,
                                      std::string_view agent_id);

}  // namespace parley::engine
