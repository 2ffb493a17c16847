// The server's live connections, so a shutdown can reach each of them.
//
// Thread safety: every member is safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace parley::transport {

class Connection;

class ConnectionRegistry {
 public:
  void add(std::uint64_t id, std::weak_ptr<Connection> connection) {
    std::lock_guard lock(mutex_);
    live_.emplace(id, std::move(connection));
  }
  void remove(std::uint64_t id) {
    std::lock_guard lock(mutex_);
    live_.erase(id);
  }
  // The connections still alive.
  std::vector<std::shared_ptr<Connection>> snapshot() const {
    std::vector<std::shared_ptr<Connection>> out;
    std::lock_guard lock(mutex_);
    for (const auto& [id, weak] : live_) {
      if (auto connection = weak.lock()) out.push_back(std::move(connection));
    }
    return out;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return live_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::uint64_t, std::weak_ptr<Connection>> live_;
};

}  // namespace parley::transport
