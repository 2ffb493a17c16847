#include "engine/adapters/adapter_registry.h"

namespace parley::engine {

void AdapterRegistry::add(std::shared_ptr<const ChannelAdapter> adapter) {
  const ChannelManifest& manifest = adapter->manifest();
  adapters_.insert_or_assign({manifest.type, manifest.version},
                             std::move(adapter));
}

std::shared_ptr<const ChannelAdapter> AdapterRegistry::find(
    std::string_view type, std::int64_t version) const {
  auto it = adapters_.find(std::pair{std::string(type), version});
  return it == adapters_.end() ? nullptr : it->second;
}

}  // namespace parley::engine
