#include "engine/expectations/builtin_handlers.h"

namespace parley::engine {

namespace {

class Audit final : public ExpectationHandler {
 public:
  std::string_view name() const override { return "audit"; }
  void handle(const FiredExpectation&, HandlerEffects&) const override {}
};

class NotifyChannel final : public ExpectationHandler {
 public:
  std::string_view name() const override { return "notify_channel"; }
  void handle(const FiredExpectation&, HandlerEffects& effects) const override {
    effects.notices.push_back({.audience = std::nullopt});
  }
};

class AutoClose final : public ExpectationHandler {
 public:
  std::string_view name() const override { return "auto_close"; }
  void handle(const FiredExpectation& fired,
              HandlerEffects& effects) const override {
    effects.close_reason = "expectation_violated:" + fired.expectation.name;
  }
};

class Warn final : public ExpectationHandler {
 public:
  std::string_view name() const override { return "warn"; }
  void handle(const FiredExpectation& fired,
              HandlerEffects& effects) const override {
    std::vector<std::string> everyone;
    for (const Participant& participant : fired.metadata.participants) {
      everyone.push_back(participant.agent_id);
    }
    effects.notices.push_back({.audience = std::move(everyone)});
  }
};

class Hide final : public ExpectationHandler {
 public:
  std::string_view name() const override { return "hide"; }
  void handle(const FiredExpectation&, HandlerEffects& effects) const override {
    effects.hide_violator = true;
  }
};

}  // namespace

std::shared_ptr<const ExpectationHandler> audit_handler() {
  return std::make_shared<Audit>();
}
std::shared_ptr<const ExpectationHandler> notify_channel_handler() {
  return std::make_shared<NotifyChannel>();
}
std::shared_ptr<const ExpectationHandler> auto_close_handler() {
  return std::make_shared<AutoClose>();
}
std::shared_ptr<const ExpectationHandler> warn_handler() {
  return std::make_shared<Warn>();
}
std::shared_ptr<const ExpectationHandler> hide_handler() {
  return std::make_shared<Hide>();
}

std::vector<std::shared_ptr<const ExpectationHandler>> builtin_handlers() {
  return {audit_handler(), notify_channel_handler(), auto_close_handler(),
          warn_handler(), hide_handler()};
}

}  // namespace parley::engine
