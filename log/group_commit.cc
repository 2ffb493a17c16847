#include "log/group_commit.h"

#include <algorithm>

namespace parley::log {

GroupCommit::GroupCommit(std::uint64_t last_sequence,
                         Sequencer::Lookups lookups, WriteGroup write)
    : write_(std::move(write)),
      sequencer_(last_sequence),
      lookups_(std::move(lookups)),
      last_sequence_(last_sequence) {}

Result<std::vector<Position>> GroupCommit::append(
    std::span<AppendEntry> batch,
    const LogStore::SequencedCallback& on_sequenced) {
  auto group = sequence(batch, {});
  if (!group) return std::unexpected(group.error());
  if (on_sequenced) on_sequenced();
  if (*group) {  // else an empty batch
    if (auto written = finish(*group); !written) {
      return std::unexpected(written.error());
    }
  }
  return positions_of(batch);
}

Result<void> GroupCommit::append_deferred(
    std::span<AppendEntry> batch, LogStore::DurableCallback on_durable) {
  auto group = sequence(batch, std::move(on_durable));
  if (!group) return std::unexpected(group.error());
  // An empty batch: no group, and sequence() left on_durable to us.
  if (!*group) on_durable({});
  return {};
}

Result<GroupCommit::GroupPtr> GroupCommit::sequence(
    std::span<AppendEntry> batch, LogStore::DurableCallback&& on_durable) {
  MutexLock lock(mutex_);
  if (closed_) return closed_error();
  if (failed_) return std::unexpected(*failed_);
  if (paused_) return std::unexpected(*paused_);
  if (auto assigned = sequencer_.assign(batch, lookups_); !assigned) {
    return std::unexpected(assigned.error());
  }
  if (batch.empty()) return GroupPtr();
  if (!open_group_) open_group_ = std::make_shared<Group>();
  open_group_->members.push_back({batch, std::move(on_durable)});
  return open_group_;
}

Result<void> GroupCommit::flush() {
  GroupPtr group;
  {
    MutexLock lock(mutex_);
    group = open_group_ ? open_group_ : writing_group_;
    if (!group) {
      if (failed_) return std::unexpected(*failed_);
      return {};
    }
  }
  return finish(group);
}

Result<void> GroupCommit::finish(const GroupPtr& group) {
  MutexLock lock(mutex_);
  if (group == open_group_ && !group->has_leader) {
    group->has_leader = true;
    const bool leads_now = !leader_active_;
    leader_active_ = true;
    lock.unlock();
    if (!leads_now) group->leader_turn.wait();
    return lead(group);
  }
  lock.unlock();
  group->done.wait();
  return group->outcome;
}

// Runs on the thread that claimed `group` once no other leader is active;
// hands the lead to the next group's claimant, if it has one, when done.
Result<void> GroupCommit::lead(const GroupPtr& group) {
  MutexLock lock(mutex_);
  ++finishing_;
  if (open_group_ == group) open_group_.reset();  // later batches: next group
  writing_group_ = group;
  const std::optional<Error> refused = failed_ ? failed_ : group->doomed;
  lock.unlock();
  const std::vector<Member>& members = group->members;
  WriteResult written;
  if (!refused) {
    for (const Member& member : members)
      Sequencer::stamp_checksums(member.batch);
    const auto started = std::chrono::steady_clock::now();
    written = write_(members);
    if (written) {
      commit_stats_.record(
          members.back().batch.back().position.log_sequence -
              members.front().batch.front().position.log_sequence + 1,
          std::chrono::steady_clock::now() - started);
    }
  }
  lock.lock();
  if (refused) {
    group->outcome = std::unexpected(*refused);
  } else if (written) {
    for (const Member& member : members) {
      for (const AppendEntry& entry : member.batch) {
        if (!entry.idempotency_key.empty()) {
          sequencer_.key_committed(entry.idempotency_key);
        }
      }
    }
    last_sequence_ = members.back().batch.back().position.log_sequence;
  } else {
    failed(written.error());
    group->outcome = std::unexpected(written.error().told);
  }
  writing_group_.reset();
  const GroupPtr next = open_group_;
  const bool hand_on = next && next->has_leader;
  leader_active_ = hand_on;
  lock.unlock();
  if (hand_on) next->leader_turn.set();
  // A told member may end its batch's storage: touch no batch after this.
  for (const Member& member : members) {
    if (member.on_durable) member.on_durable(group->outcome);
  }
  Result<void> outcome = group->outcome;
  // The waiters go on first. None can destroy this object before the
  // count below falls: destruction goes through close(), which waits for
  // it.
  group->done.set();
  lock.lock();
  --finishing_;
  appended_.notify_all();
  return outcome;
}

void GroupCommit::failed(const WriteFailure& failure) {
  if (!failure.resumable) {
    // The sequencer has numbered past this group: nothing may follow it.
    if (!failed_) failed_ = failure.refusal;
    return;
  }
  // Nothing of the group was written, or resume()'s reopen finds out what
  // was. Batches sequenced behind it would leave a gap: they fail too, and
  // the next append takes the first sequence after the last durable one.
  paused_ = failure.refusal;
  if (open_group_) open_group_->doomed = failure.refusal;
  sequencer_ = Sequencer(last_sequence_);
}

Result<void> GroupCommit::resume(const Reopen& reopen) {
  MutexLock lock(mutex_);
  if (closed_) return closed_error();
  if (failed_) return std::unexpected(*failed_);
  if (!paused_) return {};
  // Fail what is still sequenced behind the lost group, and let the
  // leader writing it finish.
  while (open_group_ || leader_active_) {
    if (open_group_ && !open_group_->has_leader) {
      const GroupPtr group = open_group_;
      lock.unlock();
      (void)finish(group);
      lock.lock();
    } else {
      lock.wait(appended_);
    }
  }
  auto last = reopen();
  if (!last) {
    if (!is_transient(last.error().code)) failed_ = last.error();
    return std::unexpected(last.error());
  }
  last_sequence_ = *last;
  sequencer_ = Sequencer(*last);
  paused_.reset();
  return {};
}

void GroupCommit::fail(Error why) {
  MutexLock lock(mutex_);
  if (!failed_) failed_ = std::move(why);
}

bool GroupCommit::close() {
  MutexLock lock(mutex_);
  closed_ = true;
  if (open_group_) {
    // Deferred batches nobody has written yet: write them now.
    const GroupPtr group = open_group_;
    lock.unlock();
    (void)finish(group);  // failures reach the members
    lock.lock();
  }
  appended_.notify_all();
  while (leader_active_ || finishing_ != 0) lock.wait(appended_);
  return !failed_ && !paused_;
}

void GroupCommit::caught_up(std::uint64_t last) const {
  if (last > last_sequence_) last_sequence_ = last;
}

std::uint64_t GroupCommit::wait_for_append(
    std::uint64_t after, std::chrono::milliseconds timeout,
    const std::function<void()>& catch_up) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  if (catch_up) {
    constexpr std::chrono::milliseconds kPoll{50};
    while (true) {
      catch_up();
      if (closed_ || last_sequence_ > after) return last_sequence_;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return last_sequence_;
      MutexLock lock(mutex_);
      lock.wait_for(appended_,
                    std::min<std::chrono::nanoseconds>(kPoll, deadline - now));
    }
  }
  MutexLock lock(mutex_);
  while (!closed_ && last_sequence_ <= after) {
    if (lock.wait_until(appended_, deadline) == std::cv_status::timeout) break;
  }
  return last_sequence_;
}

}  // namespace parley::log
