// The built-in violation handlers: AG2's audit, notify_channel and
// auto_close, plus warn and hide, which AG2's manifests name but AG2 never
// registers (Parley implements them). Every firing is audited by the hub
// before its handler's effects, whatever the handler.
#pragma once

#include <memory>
#include <vector>

#include "engine/expectations/expectation.h"

namespace parley::engine {

// Nothing beyond the audit record.
std::shared_ptr<const ExpectationHandler> audit_handler();
// An `ag2.expectation.violated` from the creator with audience null, so the
// creator does not receive it.
std::shared_ptr<const ExpectationHandler> notify_channel_handler();
// Closes the channel: "expectation_violated:<expectation name>".
std::shared_ptr<const ExpectationHandler> auto_close_handler();
// An `ag2.expectation.violated` addressed to every participant.
std::shared_ptr<const ExpectationHandler> warn_handler();
// The violator is skipped in the channel's turn order from then on.
std::shared_ptr<const ExpectationHandler> hide_handler();

// The five above, in that order.
std::vector<std::shared_ptr<const ExpectationHandler>> builtin_handlers();

}  // namespace parley::engine
