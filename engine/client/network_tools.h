// The identity-level tools AG2's NetworkPlugin gives every agent
// (AgentOptions::attach_plugin), the same in any channel: `delegate` and
// the grouped `peers`, `channels`, `tasks` and `context`, each taking an
// `action`.
// The model never sees the turn's dependencies (engine/client/tools.h).
//
// What the model is shown: a list or an object as compact JSON; a string
// as is; a failure as AG2's "Error: ..." text (a tool never fails the turn).
// An unknown action is "Error: unknown action '<a>'; choose from <list>".
// Names given by the model (target, speaker, name) may be agent ids too.
#pragma once

#include <vector>

#include "engine/client/tools.h"

namespace parley::client {

// delegate(target, prompt, capability?, timeout=300): a one-shot consult.
// Opens a consulting channel to `target` (knob {"capability": ...} when
// given), posts `prompt` to it with depth one more than the envelope the
// turn answers, and returns the target's reply text. The channel's
// envelopes go to the tool, not the agent's handler, until it returns.
// Fails fast with "Error: delegate to '<t>' channel closed: <reason>" when
// the channel is closed, expires or the invite is rejected first, and with
// "Error: delegate to '<t>' timed out after <timeout>s" after `timeout`
// seconds. Delegating to oneself is refused before anything is posted.
Tool delegate_tool();

// peers(action, ...):
//   find      query?, capability?, sort_by? ("name" | "cost" |
//             "track_record"), limit=20: summaries of the agents the hub
//             lists (not the caller): {name, agent_id, summary,
//             capabilities, observed_success_rate, cost}
//   describe  name: {passport: {name, agent_id, owner, provider, model},
//             resume: {summary, claimed_capabilities, domains, observed},
//             skill_md}; skill_md falls back to the document rendered from
//             passport and resume (engine::render_fallback_skill)
Tool peers_tool();

// channels(action, ...):
//   list   state="active" | "all": [{channel_id, type, state,
//          participants}] of the channels the caller takes part in
//   open   type, target (a name or a list), knobs?, intent?, ttl?,
//          message?: as AgentClient::open; `message` is then sent as the
//          caller's first text, and if that fails the channel is closed
//          with reason "seed_failed". {channel_id, type, participants[,
//          seed_envelope_id]}
//   info   channel_id: the channel's metadata, if the caller takes part
//   close  channel_id? (default: the turn's channel): closes it with
//          reason "closed_by_agent"; {channel_id, state, close_reason}
Tool channels_tool();

// tasks(action, ...):
//   progress  payload: on the turn's task (TurnDependencies::task, see
//             engine/client/task.h) -> "progress emitted on <id>"
//   complete  result?: completes the turn's task -> "completed <id>"; both
//             need one: "Error: <action> requires an active
//             `agent.task(...)` block"
//   list      scope="own" | "all", state="active" | "all", limit=20:
//             summaries {task_id, owner_id, title, capability, state,
//             created_at, started_at, completed_at, expires_at,
//             last_progress_at, result, error}
//   status    task_id: its summary
//   wait      task_id, timeout=300, poll_interval=0.1: polls get_task until
//             the task is terminal -> its summary, else "Error: task '<id>'
//             did not complete within <timeout>s"
//   cancel    task_id, reason?: posts ag2.task.cancel_request {task_id,
//             reason} to the owner on the task's channel (the owner
//             decides) -> "cancel_request posted to <owner> for task <id>";
//             a terminal task answers "task '<id>' is already <state>"
Tool tasks_tool();

// context(action, ...):
//   search  query, scope="channel" | "knowledge", limit=10, channel_id?:
//           the caller-visible texts of the channel containing `query`
//           (case-insensitive, ASCII letters folded), as {envelope_id,
//           sender_id, when, excerpt} (excerpt: the first 239 characters
//           and "…" past 240); scope "knowledge" is [] (no knowledge store)
//   quote   speaker, recent_n=1, channel_id?: the speaker's last
//           `recent_n` caller-visible texts, oldest first, as
//           {envelope_id, when, text}
Tool context_tool();

// The five above, in AG2's order: delegate, peers, channels, tasks,
// context.
std::vector<Tool> network_tools();

}  // namespace parley::client
