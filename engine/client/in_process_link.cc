#include "engine/client/in_process_link.h"

#include <boost/asio/post.hpp>

namespace parley::client {

namespace net = boost::asio;

InProcessLink::InProcessLink(Strand strand, engine::Hub& hub,
                             std::weak_ptr<LinkEvents> events)
    : strand_(std::move(strand)),
      hub_(hub),
      plane_(hub),
      events_(std::move(events)) {}

InProcessLink::~InProcessLink() { close(); }

void InProcessLink::open(std::function<void(Result<void>)> done) {
  net::post(strand_, [done = std::move(done)] { done({}); });
}

void InProcessLink::request(std::string op, nlohmann::json params,
                            std::function<void(Result<nlohmann::json>)> done) {
  // The reply comes inline (a read) or on a hub thread (a mutation).
  plane_.call(op, params, nullptr,
              [strand = strand_, done = std::move(done)](
                  engine::Result<nlohmann::json> result) mutable {
                net::post(strand, [done = std::move(done),
                                   result = std::move(result)]() mutable {
                  if (result) {
                    done(std::move(*result));
                  } else {
                    done(std::unexpected(from_engine(result.error())));
                  }
                });
              });
}

void InProcessLink::hello(HelloRequest hello,
                          std::function<void(Result<void>)> done) {
  if (!gate_->open) {
    net::post(strand_, [done = std::move(done)] {
      done(client_error(code::kClosed, "the link is closed"));
    });
    return;
  }
  auto admitted =
      hub_.authenticate(hello.name, hello.auth_scheme, hello.auth_claim);
  if (!admitted) {
    net::post(strand_, [done = std::move(done), error = admitted.error()] {
      done(std::unexpected(from_engine(error)));
    });
    return;
  }
  const std::string agent_id = *admitted;
  const bool replays = hello.since_envelope_id.has_value();
  // Live deliveries wait from the subscription until the replay is told.
  if (replays) ++gate_->replaying[agent_id].replays;
  subscribe(agent_id);
  net::post(strand_, [done = std::move(done)] { done({}); });
  if (!replays) return;
  auto missed = hub_.replay_for(agent_id, *hello.since_envelope_id);
  // As the server: a failed replay leaves the agent attached, unreplayed.
  std::vector<engine::Envelope> replay;
  if (missed) replay = std::move(*missed);
  net::post(strand_, [gate = gate_, events = events_, agent_id,
                      replay = std::move(replay)]() mutable {
    auto replaying = gate->replaying.find(agent_id);
    std::vector<std::shared_ptr<const engine::Envelope>> held;
    if (--replaying->second.replays == 0) {
      held = std::move(replaying->second.held);
      gate->replaying.erase(replaying);
    }
    for (engine::Envelope& envelope : replay) {
      auto owner = events.lock();
      if (!gate->open || !owner) return;
      owner->on_notify(agent_id, std::move(envelope));
    }
    for (const auto& envelope : held) {
      auto owner = events.lock();
      if (!gate->open || !owner) return;
      owner->on_notify(agent_id, *envelope);
    }
  });
}

void InProcessLink::registered(const std::string& agent_id) {
  if (gate_->open) subscribe(agent_id);
}

void InProcessLink::unregistered(const std::string& agent_id) {
  if (subscribed_.erase(agent_id) != 0) hub_.unsubscribe(agent_id);
}

void InProcessLink::subscribe(const std::string& agent_id) {
  subscribed_.insert(agent_id);
  hub_.subscribe(
      agent_id, [gate = gate_, strand = strand_, events = events_](
                    const std::string& recipient_id,
                    const std::shared_ptr<const engine::Envelope>& envelope) {
        if (!gate->open) return;
        // Copied on the strand, not on the publishing thread.
        net::post(strand, [gate, events, recipient_id, envelope]() mutable {
          if (!gate->open) return;
          if (auto replaying = gate->replaying.find(recipient_id);
              replaying != gate->replaying.end()) {
            replaying->second.held.push_back(std::move(envelope));
            return;
          }
          if (auto owner = events.lock()) {
            owner->on_notify(std::move(recipient_id), *envelope);
          }
        });
      });
}

void InProcessLink::receipt(const std::string& recipient_id,
                            const std::string& channel_id,
                            const std::string& envelope_id,
                            std::string_view status, std::string /*reason*/) {
  if (!gate_->open) return;
  hub_.acknowledge(recipient_id, channel_id, envelope_id, status,
                   [](engine::Result<void>) {});
}

void InProcessLink::close() {
  if (!gate_->open.exchange(false)) return;
  for (const std::string& agent_id : subscribed_) hub_.unsubscribe(agent_id);
  subscribed_.clear();
}

}  // namespace parley::client
