// The built-in evaluators: acks_within, reply_within, max_silence, and
// turn_within (which AG2 leaves unregistered, so its manifests' turn_within
// entries are inert there; Parley implements it). Thresholds are inclusive: a
// violation fires when the elapsed time is >= the threshold.
#pragma once

#include <memory>
#include <vector>

#include "engine/expectations/expectation.h"

namespace parley::engine {

// `params.seconds` (default 30): while pending, every invitee still in
// pending_acks once `seconds` passed since the channel's creation.
std::shared_ptr<const ExpectationEvaluator> acks_within_evaluator();
// `params.seconds` (default 600): while active, every participant with an
// unanswered `ag2.msg.text` addressed to it for `seconds`.
std::shared_ptr<const ExpectationEvaluator> reply_within_evaluator();
// `params.seconds` (default 3600): while active, channel-wide, `seconds`
// without content (anything but ag2.channel.*, ag2.task.* and violation
// notices) since the last content or the channel's creation.
std::shared_ptr<const ExpectationEvaluator> max_silence_evaluator();
// `params.seconds` (default 120): while active, the participant the adapter
// expects next has not spoken `seconds` after the envelope that gave it the
// turn (the last content, the channel's creation, or a `hide` that moved
// the turn). Channel-wide when the adapter expects nobody.
std::shared_ptr<const ExpectationEvaluator> turn_within_evaluator();

// The four above, in that order.
std::vector<std::shared_ptr<const ExpectationEvaluator>> builtin_evaluators();

}  // namespace parley::engine
