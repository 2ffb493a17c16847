#include "engine/expectations/builtin_evaluators.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace parley::engine {

namespace {

using nlohmann::json;

// params.seconds as a float, or `fallback` when absent or not a number.
double threshold_of(const ExpectationSpec& expectation, double fallback) {
  auto params = json::parse(expectation.params, nullptr, false);
  if (!params.is_object()) return fallback;
  auto seconds = params.find("seconds");
  if (seconds == params.end() || !seconds->is_number()) return fallback;
  return seconds->get<double>();
}

double seconds_between(Timestamp from, Timestamp to) {
  return static_cast<double>((to - from).count()) / 1e6;
}

std::optional<Timestamp> time_of(std::string_view iso) {
  return parse_timestamp(iso);
}

// created_at of the channel's last content envelope, else of the channel.
std::optional<Timestamp> silence_anchor(const ExpectationContext& context) {
  if (const auto& content = context.activity.last_content()) {
    return time_of(content->created_at);
  }
  return time_of(context.metadata.created_at);
}

std::string elapsed_detail(double elapsed, double threshold) {
  return json{{"elapsed_seconds", elapsed}, {"threshold_seconds", threshold}}
      .dump();
}

class AcksWithin final : public ExpectationEvaluator {
 public:
  std::string_view name() const override { return "acks_within"; }
  std::optional<Violation> evaluate(
      const ExpectationContext& context,
      const ExpectationSpec& expectation) const override {
    const ChannelMetadata& metadata = context.metadata;
    if (metadata.state != ChannelState::kPending ||
        metadata.pending_acks.empty()) {
      return std::nullopt;
    }
    const double threshold = threshold_of(expectation, 30);
    auto created = time_of(metadata.created_at);
    if (!created) return std::nullopt;
    const double elapsed = seconds_between(*created, context.now);
    if (elapsed < threshold) return std::nullopt;
    return Violation{metadata.pending_acks, elapsed_detail(elapsed, threshold)};
  }
};

class ReplyWithin final : public ExpectationEvaluator {
 public:
  std::string_view name() const override { return "reply_within"; }
  std::optional<Violation> evaluate(
      const ExpectationContext& context,
      const ExpectationSpec& expectation) const override {
    if (context.metadata.state != ChannelState::kActive) return std::nullopt;
    const double threshold = threshold_of(expectation, 600);
    Violation violation{.detail =
                            json{{"threshold_seconds", threshold}}.dump()};
    for (const Participant& participant : context.metadata.participants) {
      const std::string& id = participant.agent_id;
      const ActivityMark* latest_in = context.activity.last_text_seen(id);
      const ActivityMark* latest_out = context.activity.last_text_sent(id);
      if (!latest_in) continue;
      auto in_at = time_of(latest_in->created_at);
      if (!in_at) continue;
      if (latest_out) {
        auto out_at = time_of(latest_out->created_at);
        if (out_at && *out_at >= *in_at) continue;
      }
      if (seconds_between(*in_at, context.now) >= threshold) {
        violation.violators.push_back(id);
      }
    }
    if (violation.violators.empty()) return std::nullopt;
    return violation;
  }
};

class MaxSilence final : public ExpectationEvaluator {
 public:
  std::string_view name() const override { return "max_silence"; }
  std::optional<Violation> evaluate(
      const ExpectationContext& context,
      const ExpectationSpec& expectation) const override {
    if (context.metadata.state != ChannelState::kActive) return std::nullopt;
    const double threshold = threshold_of(expectation, 3600);
    auto anchor = silence_anchor(context);
    if (!anchor) return std::nullopt;
    const double elapsed = seconds_between(*anchor, context.now);
    if (elapsed < threshold) return std::nullopt;
    return Violation{{}, elapsed_detail(elapsed, threshold)};
  }
};

class TurnWithin final : public ExpectationEvaluator {
 public:
  std::string_view name() const override { return "turn_within"; }
  std::optional<Violation> evaluate(
      const ExpectationContext& context,
      const ExpectationSpec& expectation) const override {
    if (context.metadata.state != ChannelState::kActive) return std::nullopt;
    const double threshold = threshold_of(expectation, 120);
    auto anchor = silence_anchor(context);
    if (!anchor) return std::nullopt;
    if (context.turn_moved_at)
      anchor = std::max(*anchor, *context.turn_moved_at);
    const double elapsed = seconds_between(*anchor, context.now);
    if (elapsed < threshold) return std::nullopt;
    Violation violation{{}, elapsed_detail(elapsed, threshold)};
    if (context.adapter && context.state) {
      if (auto next =
              context.adapter->expected_next(context.metadata, *context.state);
          next && !next->agent_id.empty()) {
        violation.violators.push_back(next->agent_id);
      }
    }
    return violation;
  }
};

}  // namespace

std::shared_ptr<const ExpectationEvaluator> acks_within_evaluator() {
  return std::make_shared<AcksWithin>();
}
std::shared_ptr<const ExpectationEvaluator> reply_within_evaluator() {
  return std::make_shared<ReplyWithin>();
}
std::shared_ptr<const ExpectationEvaluator> max_silence_evaluator() {
  return std::make_shared<MaxSilence>();
}
std::shared_ptr<const ExpectationEvaluator> turn_within_evaluator() {
  return std::make_shared<TurnWithin>();
}

std::vector<std::shared_ptr<const ExpectationEvaluator>> builtin_evaluators() {
  return {acks_within_evaluator(), reply_within_evaluator(),
          max_silence_evaluator(), turn_within_evaluator()};
}

}  // namespace parley::engine
