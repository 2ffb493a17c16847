// Expectations: liveness contracts declared per channel in the manifest
// snapshot, checked by the hub's expectation tick. An evaluator decides whether
// a channel violates one expectation now; a handler decides what the hub does
// about a new violation. Both are registered by name
// (engine/expectations/expectation_registry.h).
//
// Contract for implementations: pure and thread-safe. Evaluators read only
// the context they are given; handlers only describe effects, which the hub
// applies in the same atomic log batch as the firing's own record. Neither
// may call back into the hub (the hub holds its writer lock while a handler
// runs). An exception thrown by either is reported and skipped.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/adapters/channel_adapter.h"
#include "engine/base/clock.h"
#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/base/json_text.h"
#include "engine/channels/channel.h"
#include "engine/channels/channel_activity.h"

namespace parley::engine {

// One channel as a tick sees it. Every reference lives for one evaluate()
// call.
struct ExpectationContext {
  const ChannelMetadata& metadata;
  // The channel's history as the built-ins need it, kept up to date by the
  // fold: evaluating it costs nothing however long the channel is.
  const ChannelActivity& activity;
  const ChannelAdapter* adapter = nullptr;  // null while the channel is dormant
  const AdapterState* state = nullptr;      // null while the channel is dormant
  // Reads the whole channel from the log, in order, on every call: for an
  // evaluator that needs more than `activity`, at a cost that grows with
  // the channel on every tick. Unset: the channel's log is not at hand.
  std::function<Result<std::vector<Envelope>>()> read_wal;
  Timestamp now;
  // When a `hide` firing last moved the turn in this channel: turn_within
  // anchors no earlier than this.
  std::optional<Timestamp> turn_moved_at;
};

// What an evaluator found. `violators` empty = a channel-wide violation
// (dedup key ""). `detail` is a JSON object.
struct Violation {
  std::vector<std::string> violators;
  JsonText detail = "{}";
};

class ExpectationEvaluator {
 public:
  virtual ~ExpectationEvaluator() = default;
  virtual std::string_view name() const = 0;
  virtual std::optional<Violation> evaluate(
      const ExpectationContext& context,
      const ExpectationSpec& expectation) const = 0;
};

// One new (expectation index, violator) of a channel.
struct FiredExpectation {
  const ChannelMetadata& metadata;
  std::size_t index = 0;  // position in metadata.manifest.expectations
  const ExpectationSpec& expectation;
  const Violation& violation;
  std::string_view violator;  // "" for a channel-wide violation
};

// What a handler asks the hub to do, applied atomically with the firing.
struct HandlerEffects {
  // An `ag2.expectation.violated` envelope from the channel's creator,
  // {"expectation", "violators", "detail"}; posted only while the channel
  // is active. `audience` nullopt = null (every participant but the
  // creator, as AG2's notify_channel).
  struct Notice {
    std::optional<std::vector<std::string>> audience;
  };
  std::vector<Notice> notices;
  // Closes the channel with this reason unless it is already terminal.
  std::optional<std::string> close_reason;
  // Skips the violator in the adapter's turn order from now on (adapters
  // that have none ignore it). Ignored for channel-wide violations.
  bool hide_violator = false;
};

class ExpectationHandler {
 public:
  virtual ~ExpectationHandler() = default;
  virtual std::string_view name() const = 0;
  virtual void handle(const FiredExpectation& fired,
                      HandlerEffects& effects) const = 0;
};

}  // namespace parley::engine
