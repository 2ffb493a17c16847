#include "replay/folded_store.h"

#include <optional>

#include "engine/adapters/builtin_adapters.h"
#include "engine/state/log_prefetcher.h"

namespace parley::replay {

std::unique_ptr<engine::AdapterRegistry> builtin_adapter_registry() {
  auto adapters = std::make_unique<engine::AdapterRegistry>();
  for (auto& adapter : engine::builtin_adapters()) {
    adapters->add(std::move(adapter));
  }
  return adapters;
}

FoldedStore::FoldedStore()
    : adapters_(builtin_adapter_registry()),
      state_(std::make_unique<engine::HubState>(*adapters_)) {}

engine::Result<std::unique_ptr<FoldedStore>> FoldedStore::fold(
    const log::LogStore& store, std::uint64_t up_to,
    const RecordObserver& on_record) {
  std::unique_ptr<FoldedStore> folded(new FoldedStore());
  engine::LogPrefetcher log(store);
  while (auto batch = log.next()) {
    for (std::size_t i = 0; i < batch->size(); ++i) {
      const std::uint64_t sequence = batch->log_sequence(i);
      if (sequence > up_to) return folded;
      if (auto applied = folded->state_->apply(sequence, batch->record(i));
          !applied) {
        return std::unexpected(applied.error());
      }
      folded->last_log_sequence_ = sequence;
      if (on_record) on_record(sequence, batch->record(i));
    }
  }
  if (auto read = log.result(); !read)
    return engine::storage_error(read.error());
  return folded;
}

engine::Result<void> FoldedStore::advance(const log::LogStore& store) {
  std::optional<engine::Error> failure;
  auto read = store.read(last_log_sequence_ + 1, log::kLastSequence,
                         [&](std::uint64_t sequence, std::string_view record) {
                           if (auto applied = state_->apply(sequence, record);
                               !applied) {
                             failure = applied.error();
                             return false;
                           }
                           last_log_sequence_ = sequence;
                           return true;
                         });
  if (failure) return std::unexpected(*failure);
  if (!read) return engine::storage_error(read.error());
  return {};
}

}  // namespace parley::replay
