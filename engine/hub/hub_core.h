// Internal to the hub: what every part of it shares. Its configuration is
// fixed once the hub opens; the folded state is written only by the
// Committer's writer, holding `writer` and `state_mutex` exclusively, and
// read under state_mutex shared or, by the writer, under `writer` alone.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/adapters/adapter_registry.h"
#include "engine/base/clock.h"
#include "engine/base/ids.h"
#include "engine/expectations/expectation_registry.h"
#include "engine/hub/arbiter.h"
#include "engine/hub/hub_listener.h"
#include "engine/registry/auth.h"
#include "engine/state/hub_state.h"
#include "log/log_store.h"
#include "log/mutex.h"
#include "log/shared_mutex.h"
#include "log/thread_annotations.h"

namespace parley::engine {

struct HubCore {
  explicit HubCore(std::shared_ptr<log::LogStore> log_store)
      : store(std::move(log_store)) {}
  HubCore(const HubCore&) = delete;
  HubCore& operator=(const HubCore&) = delete;

  std::shared_ptr<log::LogStore> store;
  std::shared_ptr<const Clock> clock;
  std::shared_ptr<const AuthRegistry> auth;
  std::chrono::milliseconds invite_ack_timeout{30000};
  AdapterRegistry adapters;
  // Added to only while no tick runs (at open, or by the embedder).
  ExpectationRegistry expectations;
  std::vector<std::shared_ptr<HubListener>> listeners;
  std::shared_ptr<const Arbiter> arbiter;
  EnvelopeIdMinter minter;

  // The writer lock (engine/hub/committer.h): held while a change is
  // staged, appended and folded, and while the state is rebuilt after a
  // transient failure of the log.
  log::Mutex writer;
  // Taken after `writer`. The state changes only with both held (and at
  // open, by hydrate, before the committer starts).
  mutable log::SharedMutex state_mutex ACQUIRED_AFTER(writer);
  HubState state GUARDED_BY(state_mutex){adapters};
  // Notified (on state_mutex) whenever a fold may have changed a channel's
  // lifecycle while a blocking create_channel waits, and when the hub
  // closes.
  std::condition_variable_any lifecycle_changed;
  std::atomic<bool> closed = false;

  // The state as the writer reads it while staging: with `writer` held,
  // nothing else changes it, so no state_mutex is needed.
  const HubState& staged_state() const
      REQUIRES(writer) NO_THREAD_SAFETY_ANALYSIS {
    return state;
  }

  std::string now() const { return format_timestamp(clock->now()); }

  // Tells every listener `event`, in order; a listener that throws is
  // reported on stderr and skipped. Call with no hub lock held.
  void tell(const std::function<void(HubListener&)>& event) const;
};

}  // namespace parley::engine
