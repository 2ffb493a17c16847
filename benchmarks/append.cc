// parley-bench-append: append and scan throughput of the RocksDB LogStore,
// or (--postgres URI) of the PostgreSQL one.
//
// Scenarios, each on a fresh store in its own temporary directory that is
// removed afterwards (with --postgres: in the database URI names, dropped
// before and after each scenario):
//   append_sync_1    one appender thread, Durability::kSync, one record/call
//   append_sync_32t  32 appender threads, kSync, one record/call each
//   append_async     one appender thread, Durability::kAsync
//   scan             read(1, kLastSequence) over a store filled beforehand
//                    with async appends of 1000 records; best of 3 runs
//
// Output: one db_bench-style line per scenario, then a JSON summary with one
// member per scenario. A failed append or read aborts the benchmark with a
// message on stderr and exit status 1.

#include <flatbuffers/flexbuffers.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <latch>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "benchmarks/bench_support.h"
#include "log/log_store.h"
#include "log/postgres_log_store.h"
#include "log/rocksdb_log_store.h"
#include "log/store_location.h"
#include "schemas/record.h"

namespace parley::bench {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kTargetRecordBytes = 300;
constexpr std::size_t kDistinctRecords = 4096;
constexpr std::size_t kChannels = 16;
constexpr unsigned kConcurrentAppenders = 32;
constexpr std::size_t kFillBatchRecords = 1000;
constexpr int kScanRuns = 3;

const std::vector<std::string> kScenarios = {"append_sync_1", "append_sync_32t",
                                             "append_async", "scan"};
const std::map<std::string, std::uint64_t> kDefaultOps = {
    {"append_sync_1", 20'000},
    {"append_sync_32t", 200'000},
    {"append_async", 200'000},
    {"scan", 1'000'000}};

[[noreturn]] void fail(std::string_view what, const log::Error& error) {
  throw BenchmarkError(std::string(what) + " failed (" +
                       std::string(log::to_string(error.code)) +
                       "): " + error.message);
}

void check(const log::Result<void>& result, std::string_view what) {
  if (!result) fail(what, result.error());
}

template <typename T>
T value_or_throw(log::Result<T> result, std::string_view what) {
  if (!result) fail(what, result.error());
  return std::move(*result);
}

// --- records ----------------------------------------------------------------

std::string random_hex32(std::mt19937_64& random) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string id(32, '0');
  for (char& digit : id) digit = kDigits[random() % 16];
  return id;
}

// AG2's clock format with microseconds, `index` * 137 µs after midnight.
std::string created_at(std::size_t index) { return timestamp_at(index * 137); }

std::vector<std::uint8_t> text_event_data(std::string_view text) {
  flexbuffers::Builder builder;
  builder.Map([&] {
    builder.Key("text");
    builder.String(text.data(), text.size());
  });
  builder.Finish();
  return builder.GetBuffer();
}

struct EnvelopeIds {
  std::string channel;
  std::string sender;
  std::string envelope;
};

std::string text_record(const EnvelopeIds& ids, std::string_view text,
                        std::string_view timestamp) {
  const std::vector<std::uint8_t> event_data = text_event_data(text);
  schema::EnvelopeFields envelope;
  envelope.channel_id = ids.channel;
  envelope.sender_id = ids.sender;
  envelope.event_type = "ag2.msg.text";
  envelope.event_data = event_data;
  envelope.envelope_id = ids.envelope;
  envelope.created_at = timestamp;
  return schema::build_envelope_record(envelope);
}

// The longest text whose record stays within kTargetRecordBytes, or within
// the smallest record size when even a one-character text exceeds it (an
// envelope's own fields take about 320 bytes).
std::size_t text_length_for_target_size(const EnvelopeIds& ids) {
  const std::string timestamp = created_at(0);
  auto record_bytes = [&](std::size_t length) {
    return text_record(ids, chat_text(length, 0), timestamp).size();
  };
  const std::size_t limit = std::max(kTargetRecordBytes, record_bytes(1));
  std::size_t length = 1;
  while (record_bytes(length + 1) <= limit) ++length;
  return length;
}

// Distinct, equally sized ag2.msg.text envelopes spread over kChannels
// channels. Entries are copied out, so the pool's records stay unstamped.
class RecordPool {
 public:
  explicit RecordPool(std::size_t size) {
    std::mt19937_64 random(20260101);
    std::vector<std::string> channels(kChannels);
    for (std::string& channel : channels) channel = random_hex32(random);
    const std::string sender = random_hex32(random);
    const std::size_t text_length =
        text_length_for_target_size({channels[0], sender, sender});
    for (std::size_t i = 0; i < size; ++i) {
      EnvelopeIds ids{channels[i % kChannels], sender, random_hex32(random)};
      records_.push_back(
          {text_record(ids, chat_text(text_length, i), created_at(i)),
           ids.channel, ""});
    }
  }

  // Copies record `index` (modulo the pool size) into `entry`, reusing its
  // buffers.
  void copy_to(std::uint64_t index, log::AppendEntry& entry) const {
    const log::AppendEntry& source = records_[index % records_.size()];
    entry.record.assign(source.record);
    entry.channel.assign(source.channel);
    entry.idempotency_key.clear();
  }

  std::size_t record_bytes() const { return records_.front().record.size(); }

 private:
  std::vector<log::AppendEntry> records_;
};

// --- measurements -----------------------------------------------------------

// --- stores -----------------------------------------------------------------

// The database --postgres names, or empty: set by main() before any
// scenario runs, read-only afterwards.
std::string postgres_uri;

std::unique_ptr<log::LogStore> open_scratch(const fs::path& dir,
                                            log::Durability durability) {
  if (postgres_uri.empty()) {
    return value_or_throw(
               log::open_rocksdb_log_store(dir, {.durability = durability}),
               "opening the store in " + dir.string())
        .store;
  }
  if (auto dropped = log::drop_postgres_log_store(postgres_uri);
      !dropped && dropped.error().code != log::ErrorCode::kNotFound) {
    throw BenchmarkError("dropping the store: " + dropped.error().message);
  }
  return value_or_throw(log::open_postgres_log_store(
                            postgres_uri, {.durability = durability}),
                        "opening the PostgreSQL store")
      .store;
}

// A store in its own scratch directory (or the --postgres database); the
// store closes before the directory goes (or the store is dropped).
class ScratchStore {
 public:
  ScratchStore(const fs::path& base, log::Durability durability)
      : dir_(base), store_(open_scratch(dir_.path(), durability)) {}
  ~ScratchStore() {
    (void)store_->close();
    if (!postgres_uri.empty()) {
      (void)log::drop_postgres_log_store(postgres_uri);
    }
  }

  log::LogStore& operator*() const { return *store_; }
  log::LogStore* operator->() const { return store_.get(); }

  void close() { check(store_->close(), "closing the store"); }

 private:
  ScratchDir dir_;
  std::unique_ptr<log::LogStore> store_;
};

// --- appends ----------------------------------------------------------------

// Appends `count` records, one per call, taking records `first`, `first+1`,
// ... from the pool; returns each call's latency. Stops early once `abort`
// is set; throws BenchmarkError on a failed append.
std::vector<Clock::duration> append_one_by_one(log::LogStore& store,
                                               const RecordPool& pool,
                                               std::uint64_t first,
                                               std::uint64_t count,
                                               const std::atomic<bool>& abort) {
  std::vector<Clock::duration> latencies;
  latencies.reserve(count);
  log::AppendEntry entry;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (abort.load(std::memory_order_relaxed)) break;
    pool.copy_to(first + i, entry);
    const Clock::time_point start = Clock::now();
    auto positions = store.append(std::span(&entry, 1));
    latencies.push_back(Clock::now() - start);
    value_or_throw(std::move(positions), "append");
  }
  return latencies;
}

std::uint64_t share_of(std::uint64_t total, unsigned parts, unsigned part) {
  return total / parts + (part < total % parts ? 1 : 0);
}

// Runs `threads` appenders started together; returns the wall time from
// their start to the last one's end and everyone's latencies.
std::pair<double, std::vector<Clock::duration>> run_appenders(
    log::LogStore& store, const RecordPool& pool, unsigned threads,
    std::uint64_t ops) {
  std::vector<std::vector<Clock::duration>> latencies(threads);
  std::vector<std::exception_ptr> errors(threads);
  std::atomic<bool> abort = false;
  std::latch start(threads + 1);
  std::vector<std::jthread> appenders;
  std::uint64_t first = 0;
  for (unsigned t = 0; t < threads; ++t) {
    const std::uint64_t count = share_of(ops, threads, t);
    appenders.emplace_back([&, t, first, count] {
      start.arrive_and_wait();
      try {
        latencies[t] = append_one_by_one(store, pool, first, count, abort);
      } catch (...) {
        errors[t] = std::current_exception();
        abort = true;
      }
    });
    first += count;
  }
  start.arrive_and_wait();
  const Clock::time_point begin = Clock::now();
  for (std::jthread& appender : appenders) appender.join();
  const double seconds = seconds_since(begin);
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  std::vector<Clock::duration> all;
  all.reserve(ops);
  for (const auto& samples : latencies) {
    all.insert(all.end(), samples.begin(), samples.end());
  }
  return {seconds, std::move(all)};
}

void expect_last_sequence(const log::LogStore& store, std::uint64_t expected) {
  if (store.last_sequence() == expected) return;
  throw BenchmarkError("the store holds " +
                       std::to_string(store.last_sequence()) +
                       " records, expected " + std::to_string(expected));
}

Measurement measure_appends(const std::string& name, log::Durability durability,
                            unsigned threads, std::uint64_t ops,
                            const RecordPool& pool, const fs::path& base) {
  ScratchStore store(base, durability);
  auto [seconds, latencies] = run_appenders(*store, pool, threads, ops);
  expect_last_sequence(*store, ops);
  store.close();
  std::sort(latencies.begin(), latencies.end());
  return {.name = name,
          .ops = ops,
          .seconds = seconds,
          .bytes_per_op = static_cast<double>(pool.record_bytes()),
          .p50_us = percentile_us(latencies, 0.50),
          .p99_us = percentile_us(latencies, 0.99),
          .extra = {{"record_bytes", std::to_string(pool.record_bytes())}}};
}

// --- scan -------------------------------------------------------------------

void fill(log::LogStore& store, const RecordPool& pool, std::uint64_t records) {
  std::vector<log::AppendEntry> batch;
  for (std::uint64_t next = 0; next < records; next += batch.size()) {
    batch.resize(std::min<std::uint64_t>(kFillBatchRecords, records - next));
    for (std::size_t i = 0; i < batch.size(); ++i) {
      pool.copy_to(next + i, batch[i]);
    }
    value_or_throw(store.append(batch), "filling the store");
  }
}

// Keeps the scan's checksum observable so the byte reads are not elided.
volatile std::uint64_t scan_checksum_sink = 0;

// Reads one byte of every 64-byte cache line of `record`, and its last byte.
std::uint64_t touch(std::string_view record) {
  constexpr std::size_t kCacheLine = 64;
  std::uint64_t sum =
      record.empty() ? 0 : static_cast<unsigned char>(record.back());
  for (std::size_t i = 0; i < record.size(); i += kCacheLine) {
    sum += static_cast<unsigned char>(record[i]);
  }
  return sum;
}

// One read() over the whole log that touches every record's bytes; returns
// its duration in seconds.
double timed_scan(const log::LogStore& store, std::uint64_t expected_records) {
  std::uint64_t records = 0;
  std::uint64_t checksum = 0;
  const Clock::time_point start = Clock::now();
  auto scanned = store.read(1, log::kLastSequence,
                            [&](std::uint64_t, std::string_view record) {
                              ++records;
                              checksum += touch(record);
                              return true;
                            });
  const double seconds = seconds_since(start);
  check(scanned, "scan");
  if (records != expected_records) {
    throw BenchmarkError("scan visited " + std::to_string(records) +
                         " records, expected " +
                         std::to_string(expected_records));
  }
  scan_checksum_sink = scan_checksum_sink + checksum;
  return seconds;
}

Measurement measure_scan(std::uint64_t records, const RecordPool& pool,
                         const fs::path& base) {
  ScratchStore store(base, log::Durability::kAsync);
  fill(*store, pool, records);
  expect_last_sequence(*store, records);
  double best = std::numeric_limits<double>::infinity();
  for (int run = 0; run < kScanRuns; ++run) {
    best = std::min(best, timed_scan(*store, records));
  }
  store.close();
  return {.name = "scan",
          .ops = records,
          .seconds = best,
          .bytes_per_op = static_cast<double>(pool.record_bytes()),
          .extra = {{"record_bytes", std::to_string(pool.record_bytes())}}};
}

// --- main -------------------------------------------------------------------

struct Options {
  std::vector<std::string> scenarios = kScenarios;
  std::optional<std::uint64_t> num;  // overrides every scenario's default
  std::string json_path;
  fs::path dir = fs::temp_directory_path();
};

// Flushes the OS's dirty pages first, so that writeback left over from
// earlier work does not slow this scenario's fsyncs.
Measurement run_scenario(const std::string& name, std::uint64_t ops,
                         const RecordPool& pool, const fs::path& base) {
  using log::Durability;
  ::sync();
  if (name == "append_sync_1") {
    return measure_appends(name, Durability::kSync, 1, ops, pool, base);
  }
  if (name == "append_sync_32t") {
    return measure_appends(name, Durability::kSync, kConcurrentAppenders, ops,
                           pool, base);
  }
  if (name == "append_async") {
    return measure_appends(name, Durability::kAsync, 1, ops, pool, base);
  }
  return measure_scan(ops, pool, base);
}

void run(const Options& options) {
  const RecordPool pool(kDistinctRecords);
  std::printf("Record:     %zu bytes (ag2.msg.text envelope, FlatBuffers)\n",
              pool.record_bytes());
  if (postgres_uri.empty()) {
    std::printf("Directory:  %s\n", options.dir.c_str());
  } else {
    std::printf("PostgreSQL: %s\n", log::redact_location(postgres_uri).c_str());
  }
  std::printf("Scan:       best of %d runs\n", kScanRuns);
  std::printf("------------------------------------------------\n");
  std::fflush(stdout);
  std::vector<Measurement> measurements;
  for (const std::string& name : options.scenarios) {
    const std::uint64_t ops = options.num.value_or(kDefaultOps.at(name));
    measurements.push_back(run_scenario(name, ops, pool, options.dir));
    print_line(measurements.back());
    std::fflush(stdout);
  }
  emit_summary(measurements, options.json_path);
}

std::string default_ops_help() {
  std::string help = "Operations (scan: records) per scenario; default:";
  for (const std::string& name : kScenarios) {
    help += " " + name + "=" + std::to_string(kDefaultOps.at(name));
  }
  return help;
}

}  // namespace
}  // namespace parley::bench

int main(int argc, char** argv) {
  using parley::bench::default_ops_help;
  using parley::bench::kScenarios;
  parley::bench::Options options;
  CLI::App app{"Append and scan throughput of the RocksDB LogStore"};
  app.add_option("--scenarios", options.scenarios,
                 "Comma-separated subset to run, in this order")
      ->delimiter(',')
      ->check(CLI::IsMember(kScenarios));
  std::uint64_t num = 0;
  app.add_option("--num", num, default_ops_help())->check(CLI::PositiveNumber);
  app.add_option("--json", options.json_path,
                 "Also write the JSON summary to this file");
  app.add_option("--dir", options.dir,
                 "Where to create each scenario's temporary store")
      ->check(CLI::ExistingDirectory);
  app.add_option("--postgres", parley::bench::postgres_uri,
                 "Run on the PostgreSQL store in this database (a "
                 "postgresql:// URI) instead of RocksDB; its Parley store is "
                 "dropped before and after each scenario");
  CLI11_PARSE(app, argc, argv);
  if (app.count("--num") > 0) options.num = num;
  return parley::bench::run_reporting("parley-bench-append",
                                      [&] { parley::bench::run(options); });
}
