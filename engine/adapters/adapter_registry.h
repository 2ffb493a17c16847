// Adapters by (manifest type, version). Registering a key again replaces the
// adapter; channels keep their manifest snapshot and use the new code.
//
// Thread safety: none; the hub guards it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "engine/adapters/channel_adapter.h"

namespace parley::engine {

class AdapterRegistry {
 public:
  void add(std::shared_ptr<const ChannelAdapter> adapter);
  // nullptr when nothing is registered under the key.
  std::shared_ptr<const ChannelAdapter> find(std::string_view type,
                                             std::int64_t version) const;
  std::size_t size() const { return adapters_.size(); }

 private:
  std::map<std::pair<std::string, std::int64_t>,
           std::shared_ptr<const ChannelAdapter>, std::less<>>
      adapters_;
};

}  // namespace parley::engine
