#include "engine/expectations/expectation_registry.h"

namespace parley::engine {

void ExpectationRegistry::add(
    std::shared_ptr<const ExpectationEvaluator> evaluator) {
  std::lock_guard lock(mutex_);
  std::string name(evaluator->name());
  evaluators_.insert_or_assign(std::move(name), std::move(evaluator));
}

void ExpectationRegistry::add(
    std::shared_ptr<const ExpectationHandler> handler) {
  std::lock_guard lock(mutex_);
  std::string name(handler->name());
  handlers_.insert_or_assign(std::move(name), std::move(handler));
}

std::shared_ptr<const ExpectationEvaluator> ExpectationRegistry::evaluator(
    std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = evaluators_.find(name);
  return it == evaluators_.end() ? nullptr : it->second;
}

std::shared_ptr<const ExpectationHandler> ExpectationRegistry::handler(
    std::string_view name) const {
  std::lock_guard lock(mutex_);
  auto it = handlers_.find(name);
  return it == handlers_.end() ? nullptr : it->second;
}

bool ExpectationRegistry::inert() const {
  std::lock_guard lock(mutex_);
  return evaluators_.empty() || handlers_.empty();
}

}  // namespace parley::engine
