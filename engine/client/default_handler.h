// The default handler of an AgentClient (AG2's default_handler), for every
// envelope delivered to the agent:
//
//   ag2.channel.invite from someone else   post ag2.channel.invite.ack
//                                          (causation: the invite); a
//                                          failure is ignored
//   other ag2.channel.*, ag2.task.*, own   nothing
//   anything else (a substantive turn)     get_channel, stop unless active;
//       stop if the agent already answered it (find_envelope_by_causation);
//       stop unless can_send; read_wal; fold the channel's state locally
//       with the adapter (fold_channel); resolve the view
//       (resolve_view_policy) and project the log before the envelope as
//       history; the prompt is the envelope projected through the same view,
//       else the adapter's extract_turn_input, and without one there is no
//       turn; stamp the dependencies; offer the adapter's tools_for (say is
//       run by say_function), the agent's own tools and, unless
//       AgentOptions::attach_plugin is false, the plugin tools
//       (engine/client/network_tools.h); call the model,
//       running the tools it asks for and calling it again, up to
//       AgentOptions::max_model_calls; when a tool ran, re-read and re-fold
//       the channel; post the adapter's build_round_envelope (nothing for a
//       silent round) with causation_id the envelope's id.
//
// A failure on the substantive path is reported to the hub
// (report_turn_failure; its own failure ignored) and given to `done`, so
// the receipt is a nack. A model that calls `say` on a consulting channel
// and also replies with a body fails there: its say closed the channel, and
// the round-end post is refused with protocol_error "channel '<id>' is
// closed".
//
// Runs on the HubClient's strand; `done` is called once, on the strand.
#pragma once

#include "engine/client/agent_client.h"

namespace parley::client {

// `task`: the task the turn runs under (TurnDependencies::task), as AG2's
// handler inside an `agent.task(...)` block.
void default_handler(const Envelope& envelope, AgentClient& client,
                     Handler<void> done, std::shared_ptr<Task> task = nullptr);

}  // namespace parley::client
