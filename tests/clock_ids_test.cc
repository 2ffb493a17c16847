// Ids (IDS-01, IDS-02) and hub time.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <thread>
#include <vector>

#include "engine/base/clock.h"
#include "engine/base/ids.h"

namespace parley::engine {
namespace {

using std::chrono::microseconds;

Timestamp at(std::string_view text) {
  auto parsed = parse_timestamp(text);
  REQUIRE(parsed.has_value());
  return *parsed;
}

TEST_CASE("IDS-01 ids are 32 lowercase hex with a nanosecond time prefix") {
  const auto before = std::chrono::system_clock::now();
  const std::string id = new_id();
  CHECK(has_id_shape(id));
  const auto nanos = std::stoull(id.substr(0, 16), nullptr, 16);
  const auto minted = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(nanos)));
  CHECK(minted >= std::chrono::floor<std::chrono::microseconds>(before));
  CHECK_FALSE(has_id_shape("18EA41813017E1414AA2443B631C31EF"));
  CHECK_FALSE(has_id_shape("18ea41813017e1414aa2443b631c31e"));
}

TEST_CASE("IDS-02 envelope ids are strictly increasing, also across threads") {
  EnvelopeIdMinter minter;
  std::string previous;
  for (int i = 0; i < 5000; ++i) {
    std::string id = minter.mint();
    CHECK(id > previous);
    previous = std::move(id);
  }
  std::vector<std::vector<std::string>> minted(12);
  std::vector<std::thread> threads;
  for (auto& out : minted) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) out.push_back(minter.mint());
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<std::string> all;
  for (const auto& out : minted) {
    CHECK(std::ranges::is_sorted(out));
    all.insert(out.begin(), out.end());
  }
  CHECK(all.size() == 6000);
}

TEST_CASE("envelope ids stay above a floor seeded from the future") {
  EnvelopeIdMinter minter;
  const std::string future =
      "7fffffffffffff00"
      "0000000000000000";
  minter.observe(future);
  CHECK(minter.mint() > future);
}

TEST_CASE("timestamps use +00:00 and omit zero microseconds") {
  CHECK(format_timestamp(at("2026-01-01T00:00:00+00:00")) ==
        "2026-01-01T00:00:00+00:00");
  CHECK(format_timestamp(at("2026-06-25T12:00:00.123456+00:00")) ==
        "2026-06-25T12:00:00.123456+00:00");
  CHECK(format_timestamp(at("2026-06-25T12:00:00.5Z")) ==
        "2026-06-25T12:00:00.500000+00:00");
  CHECK(format_timestamp(at("2026-06-25T14:00:00+02:00")) ==
        "2026-06-25T12:00:00+00:00");
}

TEST_CASE("malformed timestamps are refused") {
  for (auto text : {"", "2026-01-01", "2026-13-01T00:00:00+00:00",
                    "2026-01-01T00:00:00", "2026-01-01T00:00:00.+00:00",
                    "2026-01-01T00:00:00+0000", "2026-02-30T00:00:00Z"}) {
    CHECK_FALSE(parse_timestamp(text).has_value());
  }
}

TEST_CASE("a manual clock moves only when told") {
  ManualClock clock(at("2026-01-01T00:00:00+00:00"));
  CHECK(format_timestamp(clock.now()) == "2026-01-01T00:00:00+00:00");
  clock.advance(std::chrono::seconds(7300));
  CHECK(format_timestamp(clock.now()) == "2026-01-01T02:01:40+00:00");
  clock.set(at("2026-03-01T10:00:00.000001+00:00"));
  CHECK(format_timestamp(clock.now()) == "2026-03-01T10:00:00.000001+00:00");
}

}  // namespace
}  // namespace parley::engine
