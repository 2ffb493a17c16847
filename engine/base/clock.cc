#include "engine/base/clock.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

namespace parley::engine {

namespace {

using std::chrono::days;
using std::chrono::microseconds;

bool read_digits(std::string_view text, std::size_t at, std::size_t count,
                 int& out) {
  if (at + count > text.size()) return false;
  const char* first = text.data() + at;
  auto [end, ec] = std::from_chars(first, first + count, out);
  return ec == std::errc() && end == first + count;
}

}  // namespace

Timestamp SystemClock::now() const {
  return std::chrono::time_point_cast<microseconds>(
      std::chrono::system_clock::now());
}

namespace {

// Writes `value` as `width` decimal digits at `out` and moves `out` past
// them.
void write_digits(char*& out, long long value, int width) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + value % 10);
    value /= 10;
  }
  out += width;
}

std::string format_uncached(Timestamp at) {
  const auto day = std::chrono::floor<days>(at);
  const std::chrono::year_month_day date(day);
  const std::chrono::hh_mm_ss time(at - day);
  const int year = static_cast<int>(date.year());
  const auto micros = time.subseconds().count();
  // YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00, written digit by digit.
  char buffer[48];
  char* out = buffer;
  auto digits = [&out](long long value, int width) {
    write_digits(out, value, width);
  };
  if (year >= 0 && year <= 9999) {
    digits(year, 4);
  } else {
    out += std::snprintf(out, 16, "%04d", year);
  }
  *out++ = '-';
  digits(static_cast<unsigned>(date.month()), 2);
  *out++ = '-';
  digits(static_cast<unsigned>(date.day()), 2);
  *out++ = 'T';
  digits(time.hours().count(), 2);
  *out++ = ':';
  digits(time.minutes().count(), 2);
  *out++ = ':';
  digits(time.seconds().count(), 2);
  if (micros != 0) {
    *out++ = '.';
    digits(micros, 6);
  }
  std::string_view zone = "+00:00";
  out = std::copy(zone.begin(), zone.end(), out);
  return std::string(buffer, out);
}

// The text of a second in a four-digit year: "YYYY-MM-DDTHH:MM:SS".
constexpr std::size_t kSecondText = 19;
constexpr std::string_view kZone = "+00:00";

}  // namespace

std::string format_timestamp(Timestamp at) {
  // Every envelope is stamped, so this runs once per post: each thread
  // keeps the text of the last second it wrote, and a time in the same
  // second writes only its microseconds. (Timestamp::min() is no whole
  // second, so it marks an empty cache.)
  thread_local Timestamp cached_second = Timestamp::min();
  thread_local char cached_text[kSecondText];
  const auto second = std::chrono::floor<std::chrono::seconds>(at);
  if (second != cached_second) {
    std::string text = format_uncached(second);
    if (text.size() != kSecondText + kZone.size()) {
      return format_uncached(at);  // a year not written in four characters
    }
    std::copy_n(text.data(), kSecondText, cached_text);
    cached_second = second;
  }
  char buffer[kSecondText + 7 + kZone.size()];
  char* out = std::copy_n(cached_text, kSecondText, buffer);
  if (const auto micros = (at - second).count(); micros != 0) {
    *out++ = '.';
    write_digits(out, micros, 6);
  }
  out = std::copy(kZone.begin(), kZone.end(), out);
  return std::string(buffer, out);
}

bool is_representable(Timestamp at) {
  using namespace std::chrono;
  static const Timestamp kFirst = sys_days(year(1) / January / 1);
  static const Timestamp kEnd = sys_days(year(10000) / January / 1);
  return at >= kFirst && at < kEnd;
}

std::optional<Timestamp> parse_timestamp(std::string_view text) {
  int year, month, day, hour, minute, second;
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != 'T' ||
      text[13] != ':' || text[16] != ':' || !read_digits(text, 0, 4, year) ||
      !read_digits(text, 5, 2, month) || !read_digits(text, 8, 2, day) ||
      !read_digits(text, 11, 2, hour) || !read_digits(text, 14, 2, minute) ||
      !read_digits(text, 17, 2, second)) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(year),
                                         std::chrono::month(month),
                                         std::chrono::day(day)};
  if (year < 1 || !date.ok() || hour > 23 || minute > 59 || second > 59) {
    return std::nullopt;
  }
  std::size_t at = 19;
  long long micros = 0;
  if (at < text.size() && text[at] == '.') {
    std::size_t digits = 0;
    ++at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      if (digits < 6) micros = micros * 10 + (text[at] - '0');
      ++digits;
      ++at;
    }
    if (digits == 0) return std::nullopt;
    for (; digits < 6; ++digits) micros *= 10;
  }
  long long offset_seconds = 0;
  const std::string_view zone = text.substr(at);
  if (zone == "Z") {
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') &&
             zone[3] == ':') {
    int hours, minutes;
    if (!read_digits(zone, 1, 2, hours) || !read_digits(zone, 4, 2, minutes) ||
        hours > 23 || minutes > 59) {
      return std::nullopt;
    }
    offset_seconds =
        (hours * 3600LL + minutes * 60LL) * (zone[0] == '+' ? 1 : -1);
  } else {
    return std::nullopt;
  }
  return Timestamp(std::chrono::sys_days(date).time_since_epoch()) +
         std::chrono::hours(hour) + std::chrono::minutes(minute) +
         std::chrono::seconds(second - offset_seconds) + microseconds(micros);
}

}  // namespace parley::engine
