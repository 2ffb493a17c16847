// Delivery (spec §1.4, §7.6): subscribers, receipts and cursors, replay.
#include <algorithm>
#include <exception>
#include <iostream>
#include <optional>

#include "engine/hub/hub.h"
#include "engine/hub/hub_commit.h"
#include "engine/records/log_records.h"

namespace parley::engine {

void Hub::publish(const Commit& batch) {
  const std::span<const Delivery> deliveries = batch.deliveries;
  std::size_t next_event = 0;
  std::size_t next_delivery = 0;
  auto tell_until = [&](std::size_t staged) {
    while (next_event < batch.events.size() &&
           batch.events[next_event].after <= staged) {
      tell(batch.events[next_event++].tell);
    }
  };
  for (std::size_t staged = 0; staged < batch.envelopes.size(); ++staged) {
    tell_until(staged);
    std::size_t end = next_delivery;
    while (end < deliveries.size() && deliveries[end].staged == staged) ++end;
    deliver(deliveries.subspan(next_delivery, end - next_delivery));
    next_delivery = end;
  }
  deliver(deliveries.subspan(next_delivery));
  tell_until(batch.envelopes.size());
}

void Hub::tell(const std::function<void(HubListener&)>& event) const {
  for (const auto& listener : listeners_) {
    try {
      event(*listener);
    } catch (const std::exception& error) {
      std::cerr << "parley: a hub listener failed: " << error.what() << '\n';
    } catch (...) {
      std::cerr << "parley: a hub listener failed\n";
    }
  }
}

// Spec §12.1: a substantive delivery to a bound recipient raises its
// pending count; crossing the high-water mark from below signals pressure.
// A subscriber that throws fails only its own delivery (on_dispatch_failed).
void Hub::deliver(std::span<const Delivery> deliveries) {
  for (const Delivery& delivery : deliveries) {
    DeliveryCallback callback;
    std::optional<std::int64_t> pressure;
    {
      std::lock_guard lock(delivery_mutex_);
      auto it = subscribers_.find(delivery.recipient_id);
      if (it == subscribers_.end()) continue;  // offline: replay catches up
      callback = it->second;
      if (delivery.substantive) {
        const std::int64_t count = ++pending_inbox_[delivery.recipient_id];
        if (delivery.inbox_cap > 0 && delivery.high_water > 0 &&
            count == delivery.high_water) {
          pressure = count;
        }
      }
    }
    try {
      callback(delivery.recipient_id, *delivery.envelope);
    } catch (const std::exception& error) {
      const std::string what = error.what();
      tell([&](HubListener& listener) {
        listener.on_dispatch_failed(*delivery.envelope, delivery.recipient_id,
                                    what);
      });
    } catch (...) {
      tell([&](HubListener& listener) {
        listener.on_dispatch_failed(*delivery.envelope, delivery.recipient_id,
                                    "unknown error");
      });
    }
    if (pressure) {
      tell([&](HubListener& listener) {
        listener.on_inbox_pressure(delivery.recipient_id, *pressure,
                                   delivery.inbox_cap);
      });
    }
  }
}

void Hub::subscribe(std::string_view agent_id, DeliveryCallback callback) {
  std::lock_guard lock(delivery_mutex_);
  subscribers_.insert_or_assign(std::string(agent_id), std::move(callback));
}

void Hub::unsubscribe(std::string_view agent_id) {
  std::lock_guard lock(delivery_mutex_);
  if (auto it = subscribers_.find(agent_id); it != subscribers_.end()) {
    subscribers_.erase(it);
  }
}

std::shared_ptr<DeliveryQueue> Hub::subscribe_queue(std::string_view agent_id) {
  auto queue = std::make_shared<DeliveryQueue>();
  subscribe(agent_id, [queue](const std::string&, const Envelope& envelope) {
    queue->push(envelope);
  });
  return queue;
}

Result<void> Hub::acknowledge(std::string_view recipient_id,
                              std::string_view channel_id,
                              std::string_view envelope_id,
                              std::string_view status) {
  if (status != "ack" || channel_id.empty() || envelope_id.empty()) return {};
  auto writer = lock_writer();
  const AgentRecord* recipient = state_.registry.find(recipient_id);
  if (!recipient) return {};
  auto cursor = recipient->cursors.find(channel_id);
  if (cursor != recipient->cursors.end() && envelope_id <= cursor->second) {
    return {};
  }
  Commit batch;
  batch.add(cursor_advanced_record(recipient_id, channel_id, envelope_id));
  return commit(batch, writer);
}

std::string Hub::inbox_cursor(std::string_view agent_id,
                              std::string_view channel_id) const {
  std::shared_lock lock(state_mutex_);
  const AgentRecord* agent = state_.registry.find(agent_id);
  if (!agent) return "";
  auto cursor = agent->cursors.find(channel_id);
  return cursor == agent->cursors.end() ? "" : cursor->second;
}

Result<std::vector<Envelope>> Hub::replay_for(
    std::string_view agent_id, std::string_view since_envelope_id) const {
  std::vector<std::pair<std::string, std::string>> channels;  // id, floor
  {
    std::shared_lock lock(state_mutex_);
    const AgentRecord* agent = state_.registry.find(agent_id);
    if (!agent) return std::vector<Envelope>{};
    for (const ChannelEntry* channel : state_.channels.in_order()) {
      const ChannelMetadata& metadata = channel->metadata;
      if (is_terminal(metadata.state) || !metadata.has_participant(agent_id)) {
        continue;
      }
      auto cursor = agent->cursors.find(metadata.channel_id);
      std::string floor(since_envelope_id);
      if (cursor != agent->cursors.end()) {
        floor = std::max(floor, cursor->second);
      }
      channels.emplace_back(metadata.channel_id, std::move(floor));
    }
  }
  std::vector<Envelope> out;
  for (const auto& [channel_id, floor] : channels) {
    auto wal = read_wal(channel_id);
    if (!wal) return std::unexpected(wal.error());
    for (Envelope& envelope : *wal) {
      const bool addressed = !envelope.audience ||
                             std::ranges::find(*envelope.audience, agent_id) !=
                                 envelope.audience->end();
      if (!envelope.envelope_id.empty() && envelope.envelope_id > floor &&
          envelope.sender_id != agent_id && addressed) {
        out.push_back(std::move(envelope));
      }
    }
  }
  return out;
}

}  // namespace parley::engine
