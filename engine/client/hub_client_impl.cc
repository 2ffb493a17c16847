#include "engine/client/hub_client_impl.h"

#include <boost/asio/post.hpp>
#include <iostream>

namespace parley::client {

namespace net = boost::asio;
using nlohmann::json;

std::function<void(std::string_view)> default_log() {
  return [](std::string_view line) {
    std::cerr << "parley client: " << line << '\n';
  };
}

HubClientImpl::HubClientImpl(Strand strand, LinkFactory make_link,
                             bool in_process, HubClientOptions options)
    : strand_(std::move(strand)),
      make_link_(std::move(make_link)),
      in_process_(in_process),
      options_(std::move(options)) {
  if (!options_.log) options_.log = default_log();
}

void HubClientImpl::log(std::string_view line) const { options_.log(line); }

// --- The link ---------------------------------------------------------------

void HubClientImpl::connect_link(Handler<void> done) {
  if (state_ == State::kClosed) {
    return done(client_error(code::kClosed, "the client is closed"));
  }
  if (link_) link_->close();
  reconnect_wanted_ = true;
  state_ = State::kOpening;
  const std::uint64_t generation = ++generation_;
  link_ = make_link_(weak_from_this());
  link_->open([self = shared_from_this(), generation,
               done = std::move(done)](Result<void> opened) mutable {
    if (generation != self->generation_) {
      return done(client_error(code::kClosed, "superseded"));
    }
    if (!opened) {
      self->link_.reset();
      self->state_ = State::kDown;
      done(std::unexpected(opened.error()));
      return;
    }
    // Re-attach every agent; the link is up once every hello is answered.
    // A hello the link failed (it was lost meanwhile) leaves it down: its
    // on_link_lost follows and reconnects.
    auto left = std::make_shared<std::size_t>(self->agents_.size() + 1);
    auto lost = std::make_shared<bool>(false);
    auto one_done = [self, generation, left, lost, done]() mutable {
      if (--*left != 0) return;
      if (*lost || generation != self->generation_) {
        return done(client_error(code::kDisconnected,
                                 "connection lost while re-attaching"));
      }
      self->link_up();
      done({});
    };
    for (auto& [agent_id, agent] : self->agents_) {
      self->hello(HelloRequest{.name = agent.name,
                               .auth_scheme = agent.auth.scheme,
                               .auth_claim = agent.auth.claim,
                               .since_envelope_id = std::string()},
                  [self, name = agent.name, lost,
                   one_done](Result<void> hello) mutable {
                    if (!hello && (hello.error().code == code::kDisconnected ||
                                   hello.error().code == code::kClosed)) {
                      *lost = true;
                    } else if (!hello) {
                      self->log("re-attaching '" + name +
                                "' failed: " + hello.error().code + ": " +
                                hello.error().message);
                    }
                    one_done();
                  });
    }
    one_done();
  });
}

void HubClientImpl::hello(HelloRequest request,
                          std::function<void(Result<void>)> done) {
  struct Pending {
    std::function<void(Result<void>)> done;
    net::steady_timer timer;
    bool answered = false;
  };
  auto pending = std::make_shared<Pending>(Pending{
      std::move(done), net::steady_timer(strand_, options_.rpc_timeout)});
  pending->timer.async_wait(
      [pending, name = request.name,
       ms = options_.rpc_timeout.count()](boost::system::error_code ec) {
        if (ec || pending->answered) return;
        pending->answered = true;
        pending->done(client_error(
            code::kTimeout, "no answer to the hello of '" + name + "' within " +
                                std::to_string(ms) + " ms"));
      });
  link_->hello(std::move(request), [pending](Result<void> answer) {
    if (pending->answered) return;
    pending->answered = true;
    pending->timer.cancel();
    pending->done(std::move(answer));
  });
}

void HubClientImpl::link_up() {
  state_ = State::kUp;
  backoff_ = std::chrono::milliseconds(0);
  auto receipts = std::move(unsent_receipts_);
  unsent_receipts_.clear();
  for (Receipt& receipt : receipts) send_receipt(std::move(receipt));
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& call : waiting) {
    if (!call->answered) send_call(call);
  }
}

void HubClientImpl::on_link_lost(std::string why) {
  if (state_ == State::kClosed) return;
  ++generation_;
  link_.reset();
  state_ = State::kDown;
  if (reconnect_wanted_) {
    log("reconnecting after: " + why);
    schedule_reconnect();
  }
}

void HubClientImpl::schedule_reconnect() {
  backoff_ = backoff_.count() == 0
                 ? options_.reconnect_initial
                 : std::min(backoff_ * 2, options_.reconnect_max);
  reconnect_timer_ = std::make_unique<net::steady_timer>(strand_, backoff_);
  reconnect_timer_->async_wait(
      [self = shared_from_this()](boost::system::error_code ec) {
        if (ec || !self->reconnect_wanted_ || self->state_ != State::kDown) {
          return;
        }
        self->connect_link([self](Result<void> up) {
          if (!up && self->reconnect_wanted_ && self->state_ == State::kDown) {
            self->log("reconnect failed: " + up.error().message);
            self->schedule_reconnect();
          }
        });
      });
}

void HubClientImpl::disconnect() {
  if (state_ == State::kClosed) return;
  reconnect_wanted_ = false;
  if (reconnect_timer_) reconnect_timer_->cancel();
  ++generation_;
  if (link_) link_->close();
  link_.reset();
  state_ = State::kDown;
}

void HubClientImpl::close() {
  if (state_ == State::kClosed) return;
  disconnect();
  state_ = State::kClosed;
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& call : waiting) {
    answer(call, client_error(code::kClosed, "the client is closed"));
  }
  agents_.clear();
  orphans_.clear();
}

// --- Calls ------------------------------------------------------------------

void HubClientImpl::start_call(std::string op, json params,
                               std::chrono::milliseconds timeout,
                               std::function<void(Result<json>)> done) {
  auto call = std::make_shared<Call>();
  call->op = std::move(op);
  call->params = std::move(params);
  call->done = std::move(done);
  if (state_ == State::kClosed) {
    return net::post(strand_, [call, self = shared_from_this()] {
      self->answer(call, client_error(code::kClosed, "the client is closed"));
    });
  }
  if (timeout.count() <= 0) timeout = options_.rpc_timeout;
  call->timer = std::make_unique<net::steady_timer>(strand_, timeout);
  call->timer->async_wait(
      [self = shared_from_this(), call, timeout](boost::system::error_code ec) {
        if (ec || call->answered) return;
        self->answer(call,
                     client_error(code::kTimeout,
                                  "no answer to '" + call->op + "' within " +
                                      std::to_string(timeout.count()) + " ms"));
      });
  if (state_ == State::kUp) {
    send_call(call);
  } else {
    waiting_.push_back(call);
  }
}

void HubClientImpl::send_call(const std::shared_ptr<Call>& call) {
  link_->request(call->op, std::move(call->params),
                 [self = shared_from_this(), call](Result<json> result) {
                   self->answer(call, std::move(result));
                 });
}

void HubClientImpl::answer(const std::shared_ptr<Call>& call,
                           Result<json> result) {
  if (call->answered) return;
  call->answered = true;
  if (call->timer) call->timer->cancel();
  auto done = std::move(call->done);
  done(std::move(result));
}

// --- Deliveries and receipts ------------------------------------------------

void HubClientImpl::add_agent(const Passport& passport,
                              const engine::AuthInfo& auth,
                              EnvelopeHandler handler) {
  const std::string agent_id = passport.agent_id.value_or("");
  Agent& agent = agents_[agent_id];
  agent.agent_id = agent_id;
  agent.name = passport.name;
  agent.auth = auth;
  agent.handler = std::move(handler);
  if (auto orphans = orphans_.extract(agent_id)) {
    for (engine::Envelope& envelope : orphans.mapped()) {
      deliver(agent, std::move(envelope));
    }
  }
}

void HubClientImpl::on_notify(std::string recipient_id,
                              engine::Envelope envelope) {
  if (state_ == State::kClosed) return;
  auto it = agents_.find(recipient_id);
  if (it == agents_.end()) {
    auto& waiting = orphans_[recipient_id];
    if (waiting.size() < kOrphanLimit) waiting.push_back(std::move(envelope));
    return;
  }
  deliver(it->second, std::move(envelope));
}

void HubClientImpl::deliver(Agent& agent, engine::Envelope envelope) {
  if (auto seen = agent.seen.find(envelope.envelope_id);
      seen != agent.seen.end()) {
    // A redelivery (replay after a reconnect): handled once already. Once
    // finished, the ack is sent again in case the first one was lost.
    if (seen->second) {
      send_receipt({agent.agent_id, envelope.channel_id, envelope.envelope_id,
                    "ack", ""});
    }
    return;
  }
  agent.seen.emplace(envelope.envelope_id, false);
  agent.seen_order.push_back(envelope.envelope_id);
  while (agent.seen_order.size() > kSeenLimit) {
    agent.seen.erase(agent.seen_order.front());
    agent.seen_order.pop_front();
  }
  auto once = std::make_shared<std::atomic<bool>>(false);
  Finished finish = [weak = weak_from_this(), strand = strand_, once,
                     recipient = agent.agent_id, channel = envelope.channel_id,
                     id = envelope.envelope_id](bool ok, std::string reason) {
    if (once->exchange(true)) return;
    net::post(strand, [weak, recipient, channel, id, ok,
                       reason = std::move(reason)]() mutable {
      if (auto self = weak.lock()) {
        self->finished(recipient, channel, id, ok, std::move(reason));
      }
    });
  };
  try {
    agent.handler(envelope, finish);
  } catch (const std::exception& e) {
    log("the handler of '" + agent.name + "' threw on " + envelope.event_type +
        " " + envelope.envelope_id + ": " + e.what());
    finish(false, e.what());
  } catch (...) {
    log("the handler of '" + agent.name + "' threw on " + envelope.event_type +
        " " + envelope.envelope_id);
    finish(false, "unknown exception");
  }
}

void HubClientImpl::finished(const std::string& recipient_id,
                             const std::string& channel_id,
                             const std::string& envelope_id, bool ok,
                             std::string reason) {
  auto agent = agents_.find(recipient_id);
  if (agent == agents_.end()) return;  // closed meanwhile
  if (auto seen = agent->second.seen.find(envelope_id);
      seen != agent->second.seen.end()) {
    seen->second = true;
  }
  send_receipt({recipient_id, channel_id, envelope_id, ok ? "ack" : "nack",
                std::move(reason)});
}

void HubClientImpl::send_receipt(Receipt receipt) {
  if (state_ == State::kClosed) return;
  if (state_ != State::kUp) {
    unsent_receipts_.push_back(std::move(receipt));
    return;
  }
  link_->receipt(receipt.recipient_id, receipt.channel_id, receipt.envelope_id,
                 receipt.status, std::move(receipt.reason));
}

}  // namespace parley::client
