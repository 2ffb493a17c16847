#include "benchmarks/bench_support.h"

#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

namespace parley::bench {

namespace fs = std::filesystem;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
}

double percentile_us(const std::vector<Clock::duration>& sorted, double p) {
  const auto rank = static_cast<std::size_t>(std::ceil(p * sorted.size()));
  const Clock::duration sample =
      sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
  return std::chrono::duration<double, std::micro>(sample).count();
}

void print_line(const Measurement& m) {
  std::printf(
      "%-26s : %11.3f micros/op %.0f ops/sec %.3f seconds %llu "
      "operations; %6.1f MB/s",
      m.name.c_str(), m.micros_per_op(), m.ops_per_sec(), m.seconds,
      static_cast<unsigned long long>(m.ops), m.mb_per_sec());
  if (m.p50_us && m.p99_us) {
    std::printf(" p50 %.1f p99 %.1f micros", *m.p50_us, *m.p99_us);
  }
  if (m.cpu_seconds) {
    std::printf(" cpu %.0f%%", *m.cpu_seconds * 100 / m.seconds);
  }
  if (!m.note.empty()) std::printf(" (%s)", m.note.c_str());
  std::printf("\n");
  std::fflush(stdout);
}

std::string json_number(std::optional<double> value, const char* format) {
  if (!value) return "null";
  char text[64];
  std::snprintf(text, sizeof text, format, *value);
  return text;
}

std::string json_bool(bool value) { return value ? "true" : "false"; }

std::string json_summary(const std::vector<Measurement>& measurements) {
  std::string json = "{\n";
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const Measurement& m = measurements[i];
    json += "  \"" + m.name + "\": {\"ops\": " + std::to_string(m.ops) +
            ", \"seconds\": " + json_number(m.seconds, "%.6f") +
            ", \"micros_per_op\": " + json_number(m.micros_per_op(), "%.3f") +
            ", \"ops_per_sec\": " + json_number(m.ops_per_sec(), "%.1f") +
            ", \"mb_per_sec\": " + json_number(m.mb_per_sec(), "%.3f") +
            ", \"p50_us\": " + json_number(m.p50_us, "%.1f") +
            ", \"p99_us\": " + json_number(m.p99_us, "%.1f") +
            ", \"cpu_seconds\": " + json_number(m.cpu_seconds, "%.6f");
    for (const auto& [key, value] : m.extra) {
      json += ", \"" + key + "\": " + value;
    }
    json += std::string("}") + (i + 1 < measurements.size() ? ",\n" : "\n");
  }
  return json + "}\n";
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) throw BenchmarkError("cannot write " + path);
}

void emit_summary(const std::vector<Measurement>& measurements,
                  const std::string& path) {
  const std::string json = json_summary(measurements);
  std::printf("%s", json.c_str());
  if (!path.empty()) write_file(path, json);
}

int run_reporting(std::string_view program, const std::function<void()>& body) {
  try {
    body();
  } catch (const std::exception& error) {
    std::fflush(stdout);
    std::cerr << program << ": " << error.what() << "\n";
    return 1;
  }
  return 0;
}

std::optional<double> load_average() {
  std::FILE* file = std::fopen("/proc/loadavg", "r");
  if (file == nullptr) return std::nullopt;
  double load = 0;
  const bool read = std::fscanf(file, "%lf", &load) == 1;
  std::fclose(file);
  return read ? std::optional(load) : std::nullopt;
}

ScratchDir::ScratchDir(const fs::path& base) {
  std::string pattern = (base / "parley-bench-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw BenchmarkError("cannot create a directory under " + base.string());
  }
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string hex_id(std::uint64_t nanos, std::uint64_t low) {
  char text[33];
  std::snprintf(text, sizeof text, "%016llx%016llx",
                static_cast<unsigned long long>(nanos),
                static_cast<unsigned long long>(low));
  return text;
}

std::string timestamp_at(std::uint64_t micros) {
  const std::uint64_t seconds = micros / 1'000'000;
  char text[48];
  std::snprintf(text, sizeof text, "2026-01-%02uT%02u:%02u:%02u.%06u+00:00",
                static_cast<unsigned>(1 + seconds / 86400 % 28),
                static_cast<unsigned>(seconds / 3600 % 24),
                static_cast<unsigned>(seconds / 60 % 60),
                static_cast<unsigned>(seconds % 60),
                static_cast<unsigned>(micros % 1'000'000));
  return text;
}

std::string chat_text(std::size_t length, std::size_t variant) {
  static constexpr std::string_view kWords =
      "Here is the summary you asked for: the build passes on both targets, "
      "the flaky retry test is fixed, and the release notes are drafted. ";
  std::string text;
  text.reserve(length);
  for (std::size_t i = variant % kWords.size(); text.size() < length; ++i) {
    text.push_back(kWords[i % kWords.size()]);
  }
  return text;
}

}  // namespace parley::bench
