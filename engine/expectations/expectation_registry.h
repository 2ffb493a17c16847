// The evaluator and handler registries of one hub, each keyed by name;
// registering a name again replaces it.
//
// Thread safety: every member may be called from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "engine/expectations/expectation.h"

namespace parley::engine {

class ExpectationRegistry {
 public:
  void add(std::shared_ptr<const ExpectationEvaluator> evaluator);
  void add(std::shared_ptr<const ExpectationHandler> handler);

  // nullptr when `name` is not registered.
  std::shared_ptr<const ExpectationEvaluator> evaluator(
      std::string_view name) const;
  std::shared_ptr<const ExpectationHandler> handler(
      std::string_view name) const;

  // True when either registry is empty: a tick then does nothing.
  bool inert() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const ExpectationEvaluator>,
           std::less<>>
      evaluators_;
  std::map<std::string, std::shared_ptr<const ExpectationHandler>, std::less<>>
      handlers_;
};

}  // namespace parley::engine
