// The server's counters, rendered in Prometheus' text format for the admin
// port's /metrics.
//
// Thread safety: every member is safe from any thread.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace parley::engine {
struct HubHealth;
}

namespace parley::transport {

// Upper bounds, in seconds, of parley_request_seconds' buckets; a last,
// unbounded bucket follows. A create_channel waits for its invitees' acks,
// so the bounds reach past the default invite ack timeout (30 s).
inline constexpr std::array<double, 17> kRequestSecondsBounds = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
    0.1,    0.25,    0.5,    1.0,   2.5,    10.0,  30.0, 60.0};

class Metrics {
 public:
  Metrics();

  // One op's counters.
  class OpCounters {
   private:
    friend class Metrics;
    std::atomic<std::uint64_t> ok = 0;
    // By wire error code; guarded by Metrics::requests_mutex_.
    std::map<std::string, std::uint64_t, std::less<>> failures;
    // Not cumulative here: [i] counts the requests in bucket i alone.
    std::array<std::atomic<std::uint64_t>, kRequestSecondsBounds.size() + 1>
        buckets{};
    std::atomic<std::chrono::steady_clock::rep> total = 0;
  };

  void connection_opened();
  void connection_closed();
  // A request finished with `outcome` ("ok" or its wire error code),
  // `took` after the server decoded it.
  void request_done(std::string_view op, std::string_view outcome,
                    std::chrono::steady_clock::duration took);
  // The same for counters found before (posts()): an "ok" only adds to
  // atomics, with no lock and no lookup.
  void request_done(OpCounters& op, std::string_view outcome,
                    std::chrono::steady_clock::duration took);
  // post_envelope's counters, the hottest op's; they live as long as this
  // object.
  OpCounters& posts() { return posts_; }
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
  // A connection closed at accept: max_connections sockets were open.
  void connection_refused() {
    connections_refused_.fetch_add(1, std::memory_order_relaxed);
  }
  // accept() failed (out of file descriptors, memory, ...).
  void accept_failed() {
    accept_failures_.fetch_add(1, std::memory_order_relaxed);
  }

  std::int64_t connections_open() const {
    return connections_open_.load(std::memory_order_relaxed);
  }

  // What the connections hold, read at the scrape: the requests received
  // and not yet answered (summed over the open connections), their frames'
  // bytes (the server's RequestBudget) and the bytes in the send queues
  // (their SendQueueTotal).
  struct Held {
    std::int64_t requests_in_flight = 0;
    std::int64_t request_bytes_in_flight = 0;
    std::int64_t send_queue_bytes = 0;
  };
  // Every metric, the hub's health and what the connections hold
  // included, in Prometheus text format.
  std::string render(const engine::HubHealth& health, Held held) const;

 private:
  std::atomic<std::int64_t> connections_open_ = 0;
  std::atomic<std::uint64_t> connections_total_ = 0;
  std::atomic<std::uint64_t> notifies_sent_ = 0;
  std::atomic<std::uint64_t> frames_skipped_ = 0;
  std::atomic<std::uint64_t> frames_malformed_ = 0;
  std::atomic<std::uint64_t> receipts_dropped_ = 0;
  std::atomic<std::uint64_t> send_queue_overflows_ = 0;
  std::atomic<std::uint64_t> keepalive_timeouts_ = 0;
  std::atomic<std::uint64_t> connections_refused_ = 0;
  std::atomic<std::uint64_t> accept_failures_ = 0;
  // The counters of `op`, made at its first request.
  OpCounters& op(std::string_view op);

  mutable std::mutex requests_mutex_;
  // By op; guarded by requests_mutex_ (the counters themselves are not).
  std::map<std::string, OpCounters, std::less<>> requests_;
  OpCounters& posts_;
};

}  // namespace parley::transport
