#include "engine/transport/metrics.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "engine/hub/hub_health.h"
#include "engine/transport/process_cpu.h"
#include "engine/transport/process_memory.h"

namespace parley::transport {
namespace {

void family(std::ostringstream& out, std::string_view name,
            std::string_view type, std::string_view help) {
  out << "# HELP " << name << ' ' << help << '\n'
      << "# TYPE " << name << ' ' << type << '\n';
}

// A label value with Prometheus' escapes.
std::string label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", seconds);
  return text;
}

// A histogram from cumulative bucket counts, the last one unbounded.
template <class Bounds, class Counts>
void histogram(std::ostringstream& out, std::string_view name,
               std::string_view help, const Bounds& bounds,
               const Counts& cumulative, std::string_view sum) {
  family(out, name, "histogram", help);
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    out << name << "_bucket{le=\"" << bounds[i] << "\"} " << cumulative[i]
        << '\n';
  }
  out << name << "_bucket{le=\"+Inf\"} " << cumulative.back() << '\n'
      << name << "_sum " << sum << '\n'
      << name << "_count " << cumulative.back() << '\n';
}

}  // namespace

void Metrics::connection_opened() {
  connections_open_.fetch_add(1, std::memory_order_relaxed);
  connections_total_.fetch_add(1, std::memory_order_relaxed);
}

void Metrics::connection_closed() {
  connections_open_.fetch_sub(1, std::memory_order_relaxed);
}

Metrics::Metrics() : posts_(requests_["post_envelope"]) {}

Metrics::OpCounters& Metrics::op(std::string_view op) {
  std::lock_guard lock(requests_mutex_);
  auto found = requests_.find(op);
  if (found == requests_.end()) {
    found = requests_.try_emplace(std::string(op)).first;
  }
  return found->second;
}

void Metrics::request_done(std::string_view op, std::string_view outcome,
                           std::chrono::steady_clock::duration took) {
  request_done(this->op(op), outcome, took);
}

void Metrics::request_done(OpCounters& op, std::string_view outcome,
                           std::chrono::steady_clock::duration took) {
  const double seconds = std::chrono::duration<double>(took).count();
  std::size_t bucket = 0;
  while (bucket < kRequestSecondsBounds.size() &&
         seconds > kRequestSecondsBounds[bucket]) {
    ++bucket;
  }
  op.buckets[bucket].fetch_add(1, std::memory_order_relaxed);
  op.total.fetch_add(took.count(), std::memory_order_relaxed);
  if (outcome == "ok") {
    op.ok.fetch_add(1, std::memory_order_release);
    return;
  }
  std::lock_guard lock(requests_mutex_);
  auto count = op.failures.find(outcome);
  if (count == op.failures.end()) {
    count = op.failures.emplace(std::string(outcome), 0).first;
  }
  ++count->second;
}

std::string Metrics::render(const engine::HubHealth& health, Held held) const {
  std::ostringstream out;
  auto counter = [&](std::string_view name, std::string_view help,
                     std::uint64_t value) {
    family(out, name, "counter", help);
    out << name << ' ' << value << '\n';
  };
  auto gauge = [&](std::string_view name, std::string_view help,
                   std::int64_t value) {
    family(out, name, "gauge", help);
    out << name << ' ' << value << '\n';
  };
  gauge("parley_connections_open", "WebSocket connections open now.",
        connections_open_.load());
  counter("parley_connections_total", "WebSocket connections accepted.",
          connections_total_.load());
  counter("parley_connections_refused_total",
          "Connections closed at accept: max_connections sockets were open.",
          connections_refused_.load());
  counter("parley_accept_failures_total",
          "Failed accepts (out of file descriptors or memory); the listener "
          "waits 100 ms before the next.",
          accept_failures_.load());
  gauge("parley_requests_in_flight",
        "Control-plane requests received and not yet answered, over the "
        "open connections.",
        held.requests_in_flight);
  gauge("parley_request_bytes_in_flight",
        "Bytes of the frames of those requests (bounded by "
        "max_total_request_bytes_in_flight).",
        held.request_bytes_in_flight);
  gauge("parley_send_queue_bytes",
        "Bytes waiting in the connections' send queues (bounded by "
        "total_send_queue_bytes).",
        held.send_queue_bytes);
  family(out, "parley_requests_total", "counter",
         "Control-plane requests answered, by op and outcome (ok or the wire "
         "error code).");
  std::uint64_t posts = 0;
  std::ostringstream latency;
  family(latency, "parley_request_seconds", "histogram",
         "Time from decoding a control-plane request to queueing its "
         "response, by op.");
  {
    std::lock_guard lock(requests_mutex_);
    for (const auto& [op, stats] : requests_) {
      // Outcomes in label order, "ok" among the error codes.
      std::map<std::string_view, std::uint64_t> by_outcome(
          stats.failures.begin(), stats.failures.end());
      if (const std::uint64_t ok = stats.ok.load(std::memory_order_acquire);
          ok > 0) {
        by_outcome.emplace("ok", ok);
      }
      if (by_outcome.empty()) continue;  // made, not yet answered
      const std::string op_label = label(op);
      std::uint64_t answered = 0;
      for (const auto& [outcome, count] : by_outcome) {
        out << "parley_requests_total{op=\"" << op_label << "\",outcome=\""
            << label(outcome) << "\"} " << count << '\n';
        if (op == "post_envelope" && outcome == "ok") posts = count;
        answered += count;
      }
      // A request adds to its bucket and the sum before its outcome (a
      // release, or the mutex), and the outcomes are read first (an
      // acquire, or the mutex): the buckets hold every request answered,
      // and perhaps some still being counted, which the clamp leaves out.
      std::uint64_t cumulative = 0;
      for (std::size_t i = 0; i < kRequestSecondsBounds.size(); ++i) {
        cumulative += stats.buckets[i].load();
        latency << "parley_request_seconds_bucket{op=\"" << op_label
                << "\",le=\"" << kRequestSecondsBounds[i] << "\"} "
                << std::min(cumulative, answered) << '\n';
      }
      latency << "parley_request_seconds_bucket{op=\"" << op_label
              << "\",le=\"+Inf\"} " << answered << '\n'
              << "parley_request_seconds_sum{op=\"" << op_label << "\"} "
              << seconds_text(std::chrono::duration<double>(
                                  std::chrono::steady_clock::duration(
                                      stats.total.load()))
                                  .count())
              << '\n'
              << "parley_request_seconds_count{op=\"" << op_label << "\"} "
              << answered << '\n';
    }
  }
  out << latency.str();
  counter("parley_posts_total",
          "Envelopes accepted from post_envelope requests.", posts);
  counter("parley_notifies_sent_total", "notify frames queued to connections.",
          notifies_sent_.load());
  counter("parley_frames_skipped_total",
          "Inbound frames skipped (not JSON, unknown kind, wrong keys).",
          frames_skipped_.load());
  counter("parley_frames_malformed_total",
          "Inbound frames answered with protocol_error (wrongly typed field).",
          frames_malformed_.load());
  counter("parley_receipts_dropped_total",
          "Receipts for agents not bound to their connection.",
          receipts_dropped_.load());
  counter("parley_send_queue_overflows_total",
          "Connections closed because their send queue was full.",
          send_queue_overflows_.load());
  counter("parley_keepalive_timeouts_total",
          "Connections closed because a ping went unanswered.",
          keepalive_timeouts_.load());
  gauge("parley_hub_active_channels", "Non-terminal channels.",
        health.active_channels);
  gauge("parley_hub_registered_agents", "Registered agents.",
        health.registered_agents);
  gauge("parley_hub_pending_inbox_total",
        "Substantive deliveries not yet answered, summed over agents.",
        health.pending_inbox_total);
  gauge("parley_hub_log_sequence", "The last durable log sequence.",
        static_cast<std::int64_t>(health.log_sequence));
  gauge("parley_log_cache_bytes",
        "Heap the log store holds as its bounded caches (RocksDB's block "
        "cache), included in parley_heap_allocated_bytes.",
        static_cast<std::int64_t>(health.log_cache_bytes));
  gauge("parley_hub_accepting_changes",
        "1 while the hub accepts changes, 0 after a failed write or close.",
        !health.failure && !health.closed ? 1 : 0);
  histogram(out, "parley_log_group_records",
            "Records per group commit of the log (one write, one sync).",
            log::kGroupRecordBounds, health.log_commits.records_buckets,
            std::to_string(health.log_commits.records));
  histogram(out, "parley_log_group_write_seconds",
            "Time a group commit of the log took to write, its sync "
            "included.",
            log::kGroupSecondsBounds, health.log_commits.seconds_buckets,
            seconds_text(health.log_commits.seconds));
  const ProcessMemory memory = process_memory();
  if (memory.heap_bytes) {
    gauge("parley_heap_allocated_bytes",
          "Heap bytes allocated and not freed (jemalloc's stats.allocated, "
          "or glibc's mallinfo2); RocksDB's memtables and cache included.",
          static_cast<std::int64_t>(*memory.heap_bytes));
  }
  if (memory.resident_bytes) {
    gauge("process_resident_memory_bytes", "Resident memory size in bytes.",
          static_cast<std::int64_t>(*memory.resident_bytes));
  }
  const ProcessCpu cpu = process_cpu();
  if (cpu.seconds) {
    family(out, "process_cpu_seconds_total", "counter",
           "Total user and system CPU time spent in seconds.");
    out << "process_cpu_seconds_total " << seconds_text(*cpu.seconds) << '\n';
  }
  family(out, "parley_thread_cpu_seconds_total", "counter",
         "User and system CPU seconds of the live threads bearing each "
         "name (parley-io, parley-commit, parley-log, parley-sweep, "
         "RocksDB's rocksdb:high and rocksdb:low, ...).");
  for (const auto& [name, seconds] : cpu.by_thread) {
    out << "parley_thread_cpu_seconds_total{thread=\"" << label(name) << "\"} "
        << seconds_text(seconds) << '\n';
  }
  family(out, "parley_hub_channels", "gauge", "Channels by state.");
  for (const auto& [state, count] : health.channels_by_state) {
    out << "parley_hub_channels{state=\"" << label(state) << "\"} " << count
        << '\n';
  }
  return out.str();
}

}  // namespace parley::transport
