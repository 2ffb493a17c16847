// Channels from creation to their end: creation with the invite handshake
// (waiting for every invitee's ack without blocking the writer, and, for
// an asynchronous caller, without blocking any thread), explicit closes,
// expiries, and the hub's own lifecycle envelopes. Each change is built
// here and run by the Committer.
//
// Thread safety: every member may be called from any thread; the
// asynchronous handshake waiters are guarded by the part's own mutex.
#pragma once

#include <cassert>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/channels/channel_table.h"
#include "engine/hub/commit.h"
#include "engine/hub/committer.h"
#include "engine/hub/delivery.h"
#include "engine/hub/hub_core.h"
#include "engine/hub/requests.h"
#include "engine/hub/state_reads.h"
#include "engine/hub/task_mutations.h"
#include "engine/registry/identity.h"
#include "log/mutex.h"
#include "log/thread_annotations.h"

namespace parley::engine {

class ChannelLifecycle {
 public:
  ChannelLifecycle(HubCore& core, const StateReads& reads, Committer& committer,
                   Delivery& delivery, const TaskMutations& tasks)
      : core_(core),
        reads_(reads),
        committer_(committer),
        delivery_(delivery),
        tasks_(tasks) {}

  // Blocks until every invitee acked (the channel is active), or fails as
  // AG2 does when an invitee rejects, the ack timeout passes or an invite
  // cannot be posted.
  Result<ChannelMetadata> create(const CreateChannelRequest& request);
  // The same, told to `done` on one of the hub's threads; no thread waits.
  void create_async(const CreateChannelRequest& request,
                    Done<ChannelMetadata> done);

  // Moves the channel to `state` (closed or expired) with `reason`, unless
  // it is already terminal, or `pending_only` and no longer pending; then
  // its metadata either way. Blocking, or told to `done`.
  Result<ChannelMetadata> terminate_now(std::string_view channel_id,
                                        ChannelState state,
                                        std::string_view reason,
                                        bool pending_only = false);
  void terminate_async(std::string channel_id, ChannelState state,
                       std::string reason, bool pending_only,
                       Done<ChannelMetadata> done);

  // The hub's closed/expired envelope (to every participant) and audit
  // record, after the task cascade.
  void stage_terminal(Commit& batch, const ChannelEntry& channel,
                      ChannelState state, std::string_view reason) const
      REQUIRES(core_.writer);
  // An envelope the hub writes as the channel's creator: id minted, stamped
  // now; audience null means every participant.
  Envelope hub_envelope(const ChannelMetadata& metadata,
                        std::string_view event_type, nlohmann::json data,
                        std::optional<std::vector<std::string>> audience) const;

  // After `batch` is folded: wakes the blocking handshakes, and completes
  // the asynchronous ones whose channel it took out of pending, on the
  // committer's thread.
  void folded(const Commit& batch) REQUIRES(core_.state_mutex)
      EXCLUDES(waiters_mutex_);
  // For another hub part holding its own core's writer lock or state lock
  // exclusively: every part shares one HubCore, so this one's is held.
  void check_same_writer([[maybe_unused]] const HubCore& core) const
      REQUIRES(core.writer) ASSERT_CAPABILITY(core_.writer) {
    assert(&core == &core_);
  }
  void check_same_state([[maybe_unused]] const HubCore& core) const
      REQUIRES(core.state_mutex) ASSERT_CAPABILITY(core_.state_mutex) {
    assert(&core == &core_);
  }
  // Fails every handshake still waiting with "the hub is closed" and waits
  // for blocking ones to return.
  void close();

 private:
  struct Waiter;

  // Stages the channel, its audit record and its invites; its id. An
  // invite the creator's send rules refuse closes the channel in the same
  // batch and is kept in `invite_failure`: the call then fails with it.
  Change<std::string> stage_create(
      const CreateChannelRequest& request,
      std::shared_ptr<std::optional<Error>> invite_failure);
  Change<void> terminate(std::string channel_id, ChannelState state,
                         std::string reason, bool pending_only);
  // The outcome of the handshake of `channel_id`, no longer pending:
  // active -> its metadata, ended -> "closed during handshake".
  Result<ChannelMetadata> handshake_outcome(
      const ChannelMetadata& metadata) const;
  Result<ChannelMetadata> wait_for_handshake(std::string_view channel_id);
  // The ack timeout of an asynchronous handshake passed.
  void handshake_timed_out(std::string channel_id);

  HubCore& core_;
  const StateReads& reads_;
  Committer& committer_;
  Delivery& delivery_;
  const TaskMutations& tasks_;
  int blocking_waiters_ GUARDED_BY(core_.state_mutex) = 0;
  log::Mutex waiters_mutex_;
  std::map<std::string, std::shared_ptr<Waiter>, std::less<>> waiters_
      GUARDED_BY(waiters_mutex_);
};

}  // namespace parley::engine
