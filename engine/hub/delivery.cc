#include "engine/hub/delivery.h"

#include <exception>
#include <iostream>
#include <optional>

#include "engine/base/event_types.h"

namespace parley::engine {

void HubCore::tell(const std::function<void(HubListener&)>& event) const {
  for (const auto& listener : listeners) {
    try {
      event(*listener);
    } catch (const std::exception& error) {
      std::cerr << "parley: a hub listener failed: " << error.what() << '\n';
    } catch (...) {
      std::cerr << "parley: a hub listener failed\n";
    }
  }
}

void Delivery::subscribe(std::string_view agent_id, DeliveryCallback callback) {
  log::MutexLock lock(mutex_);
  subscribers_.insert_or_assign(
      std::string(agent_id),
      std::make_shared<const DeliveryCallback>(std::move(callback)));
}

std::shared_ptr<DeliveryQueue> Delivery::subscribe_queue(
    std::string_view agent_id) {
  auto queue = std::make_shared<DeliveryQueue>();
  subscribe(agent_id, [queue](const std::string&,
                              const std::shared_ptr<const Envelope>& envelope) {
    queue->push(*envelope);
  });
  return queue;
}

void Delivery::unsubscribe(std::string_view agent_id) {
  log::MutexLock lock(mutex_);
  if (auto it = subscribers_.find(agent_id); it != subscribers_.end()) {
    subscribers_.erase(it);
  }
}

void Delivery::forget(std::string_view agent_id) {
  log::MutexLock lock(mutex_);
  if (auto it = subscribers_.find(agent_id); it != subscribers_.end()) {
    subscribers_.erase(it);
  }
  if (auto it = pending_inbox_.find(agent_id); it != pending_inbox_.end()) {
    pending_inbox_.erase(it);
  }
}

void Delivery::plan(const ChannelMetadata& metadata,
                    const std::shared_ptr<const Envelope>& shared,
                    std::size_t staged, PlannedDeliveries& into) const {
  const Envelope& envelope = *shared;
  const Registry& registry = core_.state.registry;
  const bool substantive = !event_type::is_protocol(envelope.event_type);
  auto deliver_to = [&](const AgentRecord* recipient) {
    if (!recipient ||
        !core_.arbiter->authorize_dispatch(registry, envelope, *recipient)) {
      return;
    }
    PlannedDelivery& delivery = into.emplace_back();
    delivery.recipient_id = recipient->agent_id();
    delivery.envelope = shared;
    delivery.substantive = substantive;
    delivery.inbox_cap = recipient->rule.limits.inbox_max_pending;
    delivery.high_water = recipient->rule.limits.inbox_high_water.value_or(
        std::max<std::int64_t>(1, delivery.inbox_cap * 8 / 10));
    delivery.staged = staged;
  };
  if (envelope.audience) {
    for (const auto& id : *envelope.audience) {
      if (const AgentRecord* recipient = registry.find(id)) {
        deliver_to(recipient);
      } else if (auto resolved =
                     core_.arbiter->resolve_unknown_audience(envelope, id)) {
        for (const std::string& resolved_id : *resolved) {
          deliver_to(registry.find(resolved_id));
        }
      }
    }
  } else {
    for (const Participant& participant : metadata.participants) {
      if (participant.agent_id != envelope.sender_id) {
        deliver_to(registry.find(participant.agent_id));
      }
    }
  }
}

Result<void> Delivery::check_inboxes(const ChannelMetadata& metadata,
                                     const Envelope& envelope) const {
  log::MutexLock lock(mutex_);
  auto check = [&](const std::string& id)
                   REQUIRES(core_.writer, mutex_) -> Result<void> {
    if (id == envelope.sender_id) return {};
    const AgentRecord* recipient = core_.staged_state().registry.find(id);
    if (!recipient) return {};
    auto pending = pending_inbox_.find(id);
    const std::int64_t current =
        pending == pending_inbox_.end() ? 0 : pending->second;
    return core_.arbiter->authorize_inbox(*recipient, envelope, current);
  };
  if (envelope.audience) {
    for (const std::string& id : *envelope.audience) {
      if (auto room = check(id); !room) return room;
    }
  } else {
    for (const Participant& participant : metadata.participants) {
      if (auto room = check(participant.agent_id); !room) return room;
    }
  }
  return {};
}

void Delivery::publish(const Commit& batch) {
  const std::span<const PlannedDelivery> deliveries(batch.deliveries.data(),
                                                    batch.deliveries.size());
  // The batch's counts move under one hold of the mutex: its sender's drain
  // (before its deliveries, as a post drains before it is dispatched), then
  // each delivery's. Subscribers and listeners run after, the mutex free.
  Bound bound(deliveries.size());
  {
    log::MutexLock lock(mutex_);
    if (batch.drains_sender) {
      const std::string& sender = batch.envelopes.front().envelope->sender_id;
      if (auto it = pending_inbox_.find(sender);
          it != pending_inbox_.end() && it->second > 0) {
        --it->second;
      }
    }
    for (std::size_t i = 0; i < deliveries.size(); ++i) {
      const PlannedDelivery& delivery = deliveries[i];
      auto it = subscribers_.find(delivery.recipient_id);
      if (it == subscribers_.end()) continue;  // offline: replay catches up
      bound[i].callback = it->second;
      if (delivery.substantive) {
        const std::int64_t count = ++pending_inbox_[delivery.recipient_id];
        if (delivery.inbox_cap > 0 && delivery.high_water > 0 &&
            count == delivery.high_water) {
          bound[i].pressure = count;
        }
      }
    }
  }
  std::size_t next_event = 0;
  std::size_t next_delivery = 0;
  auto tell_until = [&](std::size_t staged) {
    while (next_event < batch.events.size() &&
           batch.events[next_event].after <= staged) {
      core_.tell(batch.events[next_event++].tell);
    }
  };
  auto deliver_until = [&](std::size_t end) {
    for (; next_delivery < end; ++next_delivery) {
      deliver(deliveries[next_delivery], bound[next_delivery]);
    }
  };
  for (std::size_t staged = 0; staged < batch.envelopes.size(); ++staged) {
    tell_until(staged);
    std::size_t end = next_delivery;
    while (end < deliveries.size() && deliveries[end].staged == staged) ++end;
    deliver_until(end);
  }
  deliver_until(deliveries.size());
  tell_until(batch.envelopes.size());
}

// A subscriber that throws fails only its own delivery (on_dispatch_failed).
void Delivery::deliver(const PlannedDelivery& delivery,
                       const BoundDelivery& bound) {
  if (!bound.callback) return;
  auto failed = [&](const std::string& what) {
    core_.tell([&](HubListener& listener) {
      listener.on_dispatch_failed(*delivery.envelope, delivery.recipient_id,
                                  what);
    });
  };
  try {
    (*bound.callback)(delivery.recipient_id, delivery.envelope);
  } catch (const std::exception& error) {
    failed(error.what());
  } catch (...) {
    failed("unknown error");
  }
  if (bound.pressure) {
    core_.tell([&](HubListener& listener) {
      listener.on_inbox_pressure(delivery.recipient_id, *bound.pressure,
                                 delivery.inbox_cap);
    });
  }
}

std::map<std::string, std::int64_t, std::less<>> Delivery::pending_inbox()
    const {
  log::MutexLock lock(mutex_);
  return {pending_inbox_.begin(), pending_inbox_.end()};
}

}  // namespace parley::engine
