// GroupCommit (log/group_commit.h), the group commit both persistent
// backends share, driven with a write function of the test's own: which
// batches form a group, what a failed write does to the members and to
// later appends, resume() after a resumable failure, close(), and many
// appenders at once.
#include "log/group_commit.h"

#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "log/mutex.h"
#include "tests/test_support.h"

namespace parley {
namespace {

using log::AppendEntry;
using log::Error;
using log::ErrorCode;
using log::GroupCommit;
using log::Mutex;
using log::MutexLock;
using log::Position;
using log::Sequencer;

const Sequencer::Lookups kEmptyStore{
    .last_channel_sequence =
        [](std::string_view) -> log::Result<std::uint64_t> { return 0; },
    .key_exists = [](std::string_view) -> log::Result<bool> { return false; }};

std::vector<AppendEntry> batch_of(int entries, std::string_view channel = "c") {
  std::vector<AppendEntry> batch;
  for (int i = 0; i < entries; ++i) {
    batch.push_back(testing::text_entry(channel, "x"));
  }
  return batch;
}

// The log sequences of each group written, in the order written; the
// first write waits until open() when `gated`.
class RecordingWriter {
 public:
  explicit RecordingWriter(bool gated = false) : gated_(gated) {}

  GroupCommit::WriteResult write(
      const std::vector<GroupCommit::Member>& members) {
    {
      MutexLock lock(mutex_);
      ++writing_;
      changed_.notify_all();
      while (gated_) lock.wait(changed_);
    }
    std::vector<std::uint64_t> group;
    for (const GroupCommit::Member& member : members) {
      for (const AppendEntry& entry : member.batch) {
        group.push_back(entry.position.log_sequence);
      }
    }
    MutexLock lock(mutex_);
    groups_.push_back(std::move(group));
    if (!failures_.empty()) {
      GroupCommit::WriteFailure failure = failures_.front();
      failures_.erase(failures_.begin());
      return std::unexpected(std::move(failure));
    }
    return {};
  }

  // The next writes fail with these, in order.
  void fail_next(GroupCommit::WriteFailure failure) {
    MutexLock lock(mutex_);
    failures_.push_back(std::move(failure));
  }
  void wait_until_writing() {
    MutexLock lock(mutex_);
    while (writing_ == 0) lock.wait(changed_);
  }
  void open() {
    MutexLock lock(mutex_);
    gated_ = false;
    changed_.notify_all();
  }
  std::vector<std::vector<std::uint64_t>> groups() {
    MutexLock lock(mutex_);
    return groups_;
  }

 private:
  Mutex mutex_;
  std::condition_variable changed_;  // on mutex_
  bool gated_ GUARDED_BY(mutex_);
  int writing_ GUARDED_BY(mutex_) = 0;
  std::vector<std::vector<std::uint64_t>> groups_ GUARDED_BY(mutex_);
  std::vector<GroupCommit::WriteFailure> failures_ GUARDED_BY(mutex_);
};

GroupCommit make_group_commit(RecordingWriter& writer,
                              std::uint64_t last_sequence = 0) {
  return GroupCommit(
      last_sequence, kEmptyStore,
      [&writer](const std::vector<GroupCommit::Member>& members) {
        return writer.write(members);
      });
}

GroupCommit::WriteFailure failure(bool resumable) {
  return {.told = Error{ErrorCode::kIoError, "told"},
          .refusal = Error{resumable ? ErrorCode::kNoSpace : ErrorCode::kFailed,
                           "refused"},
          .resumable = resumable};
}

TEST_CASE("batches sequenced while a group is written form the next group") {
  RecordingWriter writer(/*gated=*/true);
  GroupCommit commit = make_group_commit(writer);
  auto first = batch_of(1);
  std::thread leader([&] { CHECK(commit.append(first, {})); });
  writer.wait_until_writing();
  std::vector<std::vector<AppendEntry>> later(3, batch_of(2));
  std::atomic<int> durable = 0;
  for (auto& batch : later) {
    CHECK(commit.append_deferred(batch, [&](log::Result<void> outcome) {
      CHECK(outcome);
      ++durable;
    }));
  }
  writer.open();
  leader.join();
  CHECK(commit.flush());
  CHECK(durable == 3);
  CHECK(writer.groups() ==
        std::vector<std::vector<std::uint64_t>>{{1}, {2, 3, 4, 5, 6, 7}});
  CHECK(commit.last_sequence() == 7);
}

TEST_CASE("a failed group write fails its members and the store") {
  RecordingWriter writer;
  GroupCommit commit = make_group_commit(writer);
  writer.fail_next(failure(/*resumable=*/false));
  auto batch = batch_of(2);
  auto written = commit.append(batch, {});
  REQUIRE_FALSE(written);
  CHECK(written.error().message == "told");
  auto next = batch_of(1);
  auto refused = commit.append(next, {});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "refused");
  CHECK(commit.flush().error().message == "refused");
  CHECK(commit.resume({}).error().message == "refused");
  CHECK(commit.last_sequence() == 0);
  CHECK_FALSE(commit.close());
}

TEST_CASE("a resumable failure dooms the batches sequenced behind it") {
  RecordingWriter writer(/*gated=*/true);
  GroupCommit commit = make_group_commit(writer);
  writer.fail_next(failure(/*resumable=*/true));
  auto lost = batch_of(2);
  std::thread leader(
      [&] { CHECK(commit.append(lost, {}).error().message == "told"); });
  writer.wait_until_writing();
  // Sequenced (as 3) while 1..2 are written: it would follow a gap.
  auto behind = batch_of(1);
  std::optional<log::Result<void>> behind_outcome;
  CHECK(commit.append_deferred(
      behind, [&](log::Result<void> outcome) { behind_outcome = outcome; }));
  writer.open();
  leader.join();
  CHECK(commit.flush().error().message == "refused");
  REQUIRE(behind_outcome.has_value());
  CHECK(behind_outcome->error().message == "refused");
  CHECK(writer.groups().size() == 1);  // the doomed group was not written
  CHECK(commit.resume([]() -> log::Result<std::uint64_t> { return 0; }));
  auto next = batch_of(1);
  auto positions = commit.append(next, {});
  REQUIRE(positions);
  CHECK(positions->front().log_sequence == 1);
}

TEST_CASE("resume after a resumable failure reopens and continues") {
  RecordingWriter writer;
  GroupCommit commit = make_group_commit(writer, /*last_sequence=*/4);
  writer.fail_next(failure(/*resumable=*/true));
  auto lost = batch_of(2);
  auto failed = commit.append(lost, {});
  REQUIRE_FALSE(failed);
  CHECK(failed.error().message == "told");
  auto refused = batch_of(1);
  CHECK(commit.append(refused, {}).error().code == ErrorCode::kNoSpace);
  // Still no room: appends stay refused, and the store has not failed.
  auto still = commit.resume([]() -> log::Result<std::uint64_t> {
    return std::unexpected(Error{ErrorCode::kNoSpace, "still full"});
  });
  CHECK(still.error().message == "still full");
  CHECK(commit.append(refused, {}).error().message == "refused");
  CHECK(commit.resume([]() -> log::Result<std::uint64_t> { return 4; }));
  auto next = batch_of(1);
  auto positions = commit.append(next, {});
  REQUIRE(positions);
  CHECK(positions->front().log_sequence == 5);
  CHECK(commit.close());
}

TEST_CASE("a reopen that fails otherwise fails the store") {
  RecordingWriter writer;
  GroupCommit commit = make_group_commit(writer);
  writer.fail_next(failure(/*resumable=*/true));
  auto lost = batch_of(1);
  CHECK_FALSE(commit.append(lost, {}));
  auto broken = commit.resume([]() -> log::Result<std::uint64_t> {
    return std::unexpected(Error{ErrorCode::kFailed, "reopen failed"});
  });
  CHECK(broken.error().message == "reopen failed");
  auto next = batch_of(1);
  CHECK(commit.append(next, {}).error().message == "reopen failed");
  CHECK(commit.resume({}).error().message == "reopen failed");
}

TEST_CASE("close writes the open group and refuses appends after it") {
  RecordingWriter writer;
  GroupCommit commit = make_group_commit(writer);
  std::vector<std::vector<AppendEntry>> batches(4, batch_of(1));
  int durable = 0;
  for (auto& batch : batches) {
    CHECK(commit.append_deferred(batch, [&](log::Result<void> outcome) {
      CHECK(outcome);
      ++durable;
    }));
  }
  CHECK(commit.close());
  CHECK(durable == 4);
  CHECK(writer.groups() ==
        std::vector<std::vector<std::uint64_t>>{{1, 2, 3, 4}});
  auto late = batch_of(1);
  CHECK(commit.append(late, {}).error().code == ErrorCode::kClosed);
  CHECK(commit.close());  // idempotent
}

TEST_CASE("many appenders: every batch written once, in sequence order") {
  constexpr int kThreads = 8;
  constexpr int kBatchesPerThread = 300;
  RecordingWriter writer;
  GroupCommit commit = make_group_commit(writer);
  std::atomic<int> failures = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatchesPerThread; ++b) {
        auto batch = batch_of(1 + (t + b) % 3, std::to_string(t));
        if (!commit.append(batch, {})) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(failures == 0);
  std::uint64_t next = 1;
  bool dense = true;
  const auto groups = writer.groups();
  for (const auto& group : groups) {
    for (std::uint64_t sequence : group) dense = dense && sequence == next++;
  }
  CHECK(dense);
  CHECK(commit.last_sequence() == next - 1);
  CHECK(commit.last_sequence() == kThreads * kBatchesPerThread * 2);
  CHECK(commit.close());
}

}  // namespace
}  // namespace parley
