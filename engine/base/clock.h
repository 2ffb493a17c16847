// Hub time: an injectable clock and AG2's timestamp format.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace parley::engine {

using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;

// The hub's notion of "now". Implementations are thread-safe.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Timestamp now() const = 0;
};

// The wall clock.
class SystemClock final : public Clock {
 public:
  Timestamp now() const override;
};

// A clock that moves only when told to: tests and `parley exec` scripts.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Timestamp start)
      : micros_(start.time_since_epoch().count()) {}
  Timestamp now() const override {
    return Timestamp(std::chrono::microseconds(micros_.load()));
  }
  void set(Timestamp at) { micros_.store(at.time_since_epoch().count()); }
  void advance(std::chrono::microseconds by) { micros_.fetch_add(by.count()); }

 private:
  std::atomic<std::int64_t> micros_;  // since the epoch
};

// Python's `datetime.isoformat()` of a UTC time: "2026-06-25T12:00:00+00:00",
// with ".ffffff" before the offset only when the microseconds are non-zero.
// Strings in this format sort in time order.
std::string format_timestamp(Timestamp at);

// Whether `at` falls within years 1-9999, the years format_timestamp and
// parse_timestamp handle.
bool is_representable(Timestamp at);

// Parses an ISO-8601 time as AG2 writes it ("...+00:00", optional fraction
// of 1-6 digits) or with a "Z" suffix or another "+hh:mm"/"-hh:mm" offset
// (as Python, less than a day: hh at most 23, mm at most 59); year 1-9999.
std::optional<Timestamp> parse_timestamp(std::string_view text);

}  // namespace parley::engine
