#include "engine/base/clock.h"

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

std::string format_timestamp(Timestamp at) {
  const auto day = std::chrono::floor<days>(at);
  const std::chrono::year_month_day date(day);
  const std::chrono::hh_mm_ss time(at - day);
  char buffer[48];
  int length = std::snprintf(
      buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02d",
      static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
      static_cast<unsigned>(date.day()), static_cast<int>(time.hours().count()),
      static_cast<int>(time.minutes().count()),
      static_cast<int>(time.seconds().count()));
  const auto micros = time.subseconds().count();
  if (micros != 0) {
    length += std::snprintf(buffer + length, sizeof buffer - length, ".%06lld",
                            static_cast<long long>(micros));
  }
  std::string out(buffer, length);
  out += "+00:00";
  return out;
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
