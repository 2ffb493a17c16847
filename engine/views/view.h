// Views: the pure projection of a channel's log into the model-facing history
// of one participant.
//
// Everything here is a function of its arguments: no I/O, no clock, no
// hub. Projecting the same envelopes with the same policy, participant,
// renderer and names always gives the same items. Callable from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/adapters/channel_adapter.h"
#include "engine/base/envelope.h"
#include "engine/views/view_policy.h"
#include "engine/views/visibility.h"

namespace parley::engine {

// One entry of a model's history: AG2's ModelRequest([TextInput]) (kUser),
// ModelMessage (kAssistant) or CompactionSummary (kSummary).
struct ModelItem {
  enum class Kind { kUser, kAssistant, kSummary };

  Kind kind = Kind::kUser;
  std::string text;
  // kSummary: how many envelopes the summary stands for; 0 otherwise.
  std::size_t event_count = 0;

  bool operator==(const ModelItem&) const = default;
};

// An agent id -> the name models see. Unknown ids must resolve to
// themselves. An empty NameResolver is the identity.
using NameResolver = std::function<std::string(std::string_view agent_id)>;

// An envelope -> its model-visible text, or nullopt to skip it
// (ChannelAdapter::render_envelope).
using EnvelopeRenderer =
    std::function<std::optional<std::string>(const EnvelopeView& envelope)>;

// Projects `log` (one channel's envelopes, in log order) for
// `participant_id`. An envelope is shown when visible_to(participant) and
// the renderer gives a string; own envelopes become kAssistant items,
// others' kUser items ("[<name>]: <text>" under the named policies).
// Windowed policies with more than recent_n shown envelopes replace the
// oldest with one leading kSummary item, "Earlier in this channel: <k>
// message<s> from <speakers>." with the sorted unique sender ids (names
// under the named policy), so the result never exceeds recent_n + 1 items.
//
// `render` must not be empty. Nothing is retained past the call.
std::vector<ModelItem> project(const ViewPolicy& policy,
                               std::span<const Envelope> log,
                               std::string_view participant_id,
                               const EnvelopeRenderer& render,
                               const NameResolver& name_for = {});

// As above, rendering with `adapter.render_envelope` (the channel's
// adapter).
std::vector<ModelItem> project(const ViewPolicy& policy,
                               std::span<const Envelope> log,
                               std::string_view participant_id,
                               const ChannelAdapter& adapter,
                               const NameResolver& name_for = {});

// The summary line for `count` elided envelopes by `speakers` (already
// sorted and unique): "Earlier in this channel: 1 message from alice." /
// "... 5 messages from alice, bob.".
std::string summary_text(std::size_t count,
                         std::span<const std::string> speakers);

}  // namespace parley::engine
