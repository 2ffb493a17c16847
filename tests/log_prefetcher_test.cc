// LogPrefetcher: every record in log order, in batches; a reader thread
// only for a log longer than one batch; a failed read ends the batches and
// is reported.
#include "engine/state/log_prefetcher.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>

#include "log/forwarding_log_store.h"
#include "log/memory_log_store.h"

namespace parley {
namespace {

using engine::LogPrefetcher;

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

// A log of `records` records ("record N" at sequence N) whose read fails
// once it would pass `fail_after`; remembers the thread that read it.
class SyntheticLog final : public log::ForwardingLogStore {
 public:
  explicit SyntheticLog(std::uint64_t records,
                        std::uint64_t fail_after = kNever)
      : ForwardingLogStore(log::make_memory_log_store()),
        records_(records),
        fail_after_(fail_after) {}

  log::Result<void> read(std::uint64_t from, std::uint64_t to,
                         const log::RecordVisitor& visit) const override {
    reader_ = std::this_thread::get_id();
    for (std::uint64_t sequence = from; sequence <= std::min(to, records_);
         ++sequence) {
      if (sequence > fail_after_) {
        return std::unexpected(
            log::Error{log::ErrorCode::kIoError, "the disk went away"});
      }
      if (!visit(sequence, "record " + std::to_string(sequence))) return {};
    }
    return {};
  }
  std::uint64_t last_sequence() const override { return records_; }
  std::thread::id reader() const { return reader_; }

 private:
  const std::uint64_t records_;
  const std::uint64_t fail_after_;
  mutable std::atomic<std::thread::id> reader_;
};

// Consumes every batch; the sequences handed out, checked against their
// records, end at the last one; returns how many there were.
std::uint64_t consume(LogPrefetcher& log, std::uint64_t first) {
  std::uint64_t expected = first;
  while (auto batch = log.next()) {
    REQUIRE(batch->size() > 0);
    for (std::size_t i = 0; i < batch->size(); ++i) {
      REQUIRE(batch->log_sequence(i) == expected);
      REQUIRE(batch->record(i) == "record " + std::to_string(expected));
      REQUIRE(reinterpret_cast<std::uintptr_t>(batch->record(i).data()) % 8 ==
              0);
      ++expected;
    }
  }
  return expected - first;
}

TEST_CASE(
    "the prefetcher hands out every record in log order, from any first "
    "sequence, with and without its reader thread") {
  for (const std::uint64_t records : {0, 1, 4095, 4096, 4097, 20'000}) {
    for (const std::uint64_t first : {1, 3}) {
      CAPTURE(records);
      CAPTURE(first);
      SyntheticLog store(records);
      LogPrefetcher log(store, first);
      CHECK(consume(log, first) ==
            (records >= first ? records - first + 1 : 0));
      CHECK(log.result().has_value());
    }
  }
}

TEST_CASE(
    "a log of one batch is read on the consumer's thread, a longer one on "
    "a reader thread of its own") {
  SyntheticLog small(4096);
  LogPrefetcher small_log(small);
  CHECK(consume(small_log, 1) == 4096);
  CHECK(small.reader() == std::this_thread::get_id());

  SyntheticLog large(4097);
  LogPrefetcher large_log(large);
  CHECK(consume(large_log, 1) == 4097);
  CHECK(large.reader() != std::this_thread::get_id());
}

TEST_CASE(
    "a read that fails hands out the whole batches before the failure, "
    "then reports it") {
  SUBCASE("on the consumer's thread") {
    SyntheticLog store(3000, 2000);
    LogPrefetcher log(store);
    CHECK(consume(log, 1) == 0);
    REQUIRE_FALSE(log.result().has_value());
    CHECK(log.result().error().message == "the disk went away");
  }
  SUBCASE("on the reader thread") {
    SyntheticLog store(20'000, 9000);
    LogPrefetcher log(store);
    CHECK(consume(log, 1) == 2 * 4096);
    REQUIRE_FALSE(log.result().has_value());
    CHECK(log.result().error().code == log::ErrorCode::kIoError);
  }
}

TEST_CASE("a prefetcher dropped before its log is read stops its reader") {
  SyntheticLog store(50'000);
  {
    LogPrefetcher log(store);
    REQUIRE(log.next().has_value());
  }  // the reader, blocked four batches ahead, is stopped and joined
  CHECK(store.reader() != std::this_thread::get_id());
}

}  // namespace
}  // namespace parley
