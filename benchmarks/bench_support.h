// What the benchmarks (append, fold, hydrate, post) share: db_bench-style
// result lines, the JSON summary, latency percentiles, scratch directories,
// and the envelope fields they fabricate (ids, timestamps, chat texts).
//
// Output format. One line per measurement:
//   <name> : <µs> micros/op <n> ops/sec <s> seconds <n> operations; <x> MB/s
// followed by " p50 <µs> p99 <µs> micros" when latencies were sampled,
// " cpu <n>%" when CPU time was taken, and " (<note>)" when the measurement
// carries one. The JSON summary is one
// object with one member per measurement, one member per line, in the order
// measured.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::bench {

using Clock = std::chrono::steady_clock;

// The benchmark must stop. Thrown so that hubs and stores close and scratch
// directories are removed on the way out of main(), which prints the
// message on stderr and exits with status 1.
class BenchmarkError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Measurement {
  std::string name;
  std::uint64_t ops = 0;
  double seconds = 0;
  double bytes_per_op = 0;       // for MB/s; 0 when bytes mean nothing here
  std::optional<double> p50_us;  // per-op latency, when sampled
  std::optional<double> p99_us;
  // CPU time of the measuring thread(s) over the same interval, when taken:
  // well below `seconds` means the run waited (I/O, locks, or other
  // processes holding the cores).
  std::optional<double> cpu_seconds;
  std::string note;  // printed after the line, not in the JSON
  // Extra JSON members: name -> JSON value text, appended in order.
  std::vector<std::pair<std::string, std::string>> extra;

  double micros_per_op() const { return seconds * 1e6 / ops; }
  double ops_per_sec() const { return ops / seconds; }
  // MiB/s, as db_bench's "MB/s".
  double mb_per_sec() const { return ops * bytes_per_op / 1048576.0 / seconds; }
};

double seconds_since(Clock::time_point start);

// CPU time consumed so far by the calling thread, in seconds.
double thread_cpu_seconds();

// Nearest-rank percentile (p in [0, 1]) of sorted, non-empty samples, in
// microseconds.
double percentile_us(const std::vector<Clock::duration>& sorted, double p);

// Prints `m` as one db_bench-style line on stdout and flushes it.
void print_line(const Measurement& m);

// `value` formatted with printf `format`, or "null".
std::string json_number(std::optional<double> value, const char* format);
std::string json_bool(bool value);

std::string json_summary(const std::vector<Measurement>& measurements);

// Writes `text` to `path`; throws BenchmarkError when it cannot.
void write_file(const std::string& path, const std::string& text);

// Prints the JSON summary of `measurements` on stdout and, when `path` is
// not empty, writes it there too.
void emit_summary(const std::vector<Measurement>& measurements,
                  const std::string& path);

// A benchmark's main(): runs `body`; an exception is reported on stderr as
// "<program>: <what>" after stdout is flushed. Returns the exit status.
int run_reporting(std::string_view program, const std::function<void()>& body);

// The 1-minute load average, or nullopt when /proc/loadavg is unreadable.
std::optional<double> load_average();

// A fresh directory under `base`, removed with its contents on destruction
// unless keep() was called.
class ScratchDir {
 public:
  explicit ScratchDir(const std::filesystem::path& base);
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// --- fabricated envelope fields ---------------------------------------------

// A 32-hex id shaped like the hub's: the first 16 digits `nanos`, the last
// 16 `low`. Distinct (nanos, low) give distinct ids; increasing nanos give
// increasing ids.
std::string hex_id(std::uint64_t nanos, std::uint64_t low);

// AG2's clock format with microseconds, `micros` after 2026-01-01T00:00:00.
std::string timestamp_at(std::uint64_t micros);

// English-looking chat text of exactly `length` bytes; `variant` rotates it.
std::string chat_text(std::size_t length, std::size_t variant);

}  // namespace parley::bench
