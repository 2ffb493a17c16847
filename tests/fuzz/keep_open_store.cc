#include "tests/fuzz/keep_open_store.h"

#include "log/forwarding_log_store.h"

namespace parley::fuzz {
namespace {

class KeepOpenStore final : public log::ForwardingLogStore {
 public:
  using ForwardingLogStore::ForwardingLogStore;

  log::Result<void> close() override { return {}; }
};

}  // namespace

std::shared_ptr<log::LogStore> keep_open(std::shared_ptr<log::LogStore> inner) {
  return std::make_shared<KeepOpenStore>(std::move(inner));
}

}  // namespace parley::fuzz
