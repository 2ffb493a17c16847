// The server's counters, rendered in Prometheus' text format for the admin
// port's /metrics.
//
// Thread safety: every member is safe from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace parley::engine {
struct HubHealth;
}

namespace parley::transport {

class Metrics {
 public:
  void connection_opened();
  void connection_closed();
  // A request finished with `outcome`: "ok" or its wire error code.
  void request_done(std::string_view op, std::string_view outcome);
  void notify_sent() { notifies_sent_.fetch_add(1, std::memory_order_relaxed); }
  void frame_skipped() {
    frames_skipped_.fetch_add(1, std::memory_order_relaxed);
  }
  void frame_malformed() {
    frames_malformed_.fetch_add(1, std::memory_order_relaxed);
  }
  void receipt_dropped() {
    receipts_dropped_.fetch_add(1, std::memory_order_relaxed);
  }
  // A frame refused by a full send queue; its connection is closed.
  void send_queue_overflow() {
    send_queue_overflows_.fetch_add(1, std::memory_order_relaxed);
  }
  void keepalive_timeout() {
    keepalive_timeouts_.fetch_add(1, std::memory_order_relaxed);
  }

  std::int64_t connections_open() const {
    return connections_open_.load(std::memory_order_relaxed);
  }

  // Every metric, the hub's health included, in Prometheus text format.
  std::string render(const engine::HubHealth& health) const;

 private:
  std::atomic<std::int64_t> connections_open_ = 0;
  std::atomic<std::uint64_t> connections_total_ = 0;
  std::atomic<std::uint64_t> notifies_sent_ = 0;
  std::atomic<std::uint64_t> frames_skipped_ = 0;
  std::atomic<std::uint64_t> frames_malformed_ = 0;
  std::atomic<std::uint64_t> receipts_dropped_ = 0;
  std::atomic<std::uint64_t> send_queue_overflows_ = 0;
  std::atomic<std::uint64_t> keepalive_timeouts_ = 0;
  mutable std::mutex requests_mutex_;
  // (op, outcome) -> count.
  std::map<std::pair<std::string, std::string>, std::uint64_t, std::less<>>
      requests_;
};

}  // namespace parley::transport
