#include "engine/client/human_client.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>

#include "engine/client/envelopes.h"

namespace parley::client {

namespace net = boost::asio;

// Everything below runs on the HubClient's strand, except passport and
// agent_id, which are written once before the HumanClient is handed out.
struct HumanClient::State : std::enable_shared_from_this<State> {
  struct Waiter {
    std::uint64_t id;
    Predicate predicate;
    Handler<Envelope> done;
    std::unique_ptr<net::steady_timer> timer;
  };
  struct Inbound {
    Envelope envelope;
    Finished finished;
  };

  std::shared_ptr<HubClient> hub;
  HumanOptions options;
  Passport passport;
  std::string agent_id;
  bool disconnected = false;

  std::vector<std::pair<CallbackId, Callback>> callbacks;
  std::deque<Envelope> inbox;
  std::deque<Waiter> waiters;
  std::uint64_t next_waiter = 1;
  std::deque<Inbound> pending;  // delivered, not yet processed
  bool busy = false;

  void log(const std::string& line) { hub->log(line); }

  // The HubClient's EnvelopeHandler for this human.
  void receive(const Envelope& envelope, Finished finished) {
    pending.push_back({envelope, std::move(finished)});
    if (!busy) process_next();
  }

  void process_next() {
    while (!pending.empty()) {
      busy = true;
      Inbound next = std::move(pending.front());
      pending.pop_front();
      if (disconnected) {
        next.finished(true, "");
        continue;
      }
      if (options.auto_ack_invites &&
          next.envelope.event_type == event_type::kChannelInvite &&
          next.envelope.sender_id != agent_id) {
        // Accepted before anyone sees it; the next envelope waits.
        Envelope ack = invite_ack(next.envelope, agent_id);
        // Weak: a call still in flight when the executor stops must not
        // keep the state (which holds the HubClient) alive in a cycle.
        hub->post_envelope(
            std::move(ack), [weak = weak_from_this(), next = std::move(next)](
                                Result<std::string> acked) mutable {
              auto self = weak.lock();
              if (!self) return next.finished(true, "");
              if (!acked) {
                self->log("acking the invite to " + next.envelope.channel_id +
                          " failed: " + acked.error().message);
              }
              self->fan_out(next.envelope);
              next.finished(true, "");
              self->process_next();
            });
        return;
      }
      fan_out(next.envelope);
      next.finished(true, "");
    }
    busy = false;
  }

  void fan_out(const Envelope& envelope) {
    if (disconnected) return;
    inbox.push_back(envelope);
    serve_waiters();
    // A callback may add or remove callbacks: run over a copy.
    auto current = callbacks;
    for (auto& [id, callback] : current) {
      try {
        callback(envelope);
      } catch (const std::exception& e) {
        log("human callback raised: human=" + passport.name +
            " channel=" + envelope.channel_id +
            " event=" + envelope.event_type + ": " + e.what());
      } catch (...) {
        log("human callback raised: human=" + passport.name + " channel=" +
            envelope.channel_id + " event=" + envelope.event_type);
      }
    }
  }

  void serve_waiters() {
    while (!waiters.empty() && !inbox.empty()) {
      Envelope envelope = std::move(inbox.front());
      inbox.pop_front();
      Waiter& waiter = waiters.front();
      bool match = true;
      if (waiter.predicate) {
        try {
          match = waiter.predicate(envelope);
        } catch (const std::exception& e) {
          log("next_envelope predicate raised: " + std::string(e.what()));
          match = false;
        }
      }
      if (!match) continue;  // discarded, as AG2 does
      Waiter served = std::move(waiter);
      waiters.pop_front();
      if (served.timer) served.timer->cancel();
      served.done(std::move(envelope));
    }
  }

  void add_waiter(Predicate predicate,
                  std::optional<std::chrono::milliseconds> timeout,
                  Handler<Envelope> done) {
    if (disconnected) {
      return done(client_error(code::kClosed, "HumanClient is disconnected"));
    }
    Waiter waiter{next_waiter++, std::move(predicate), std::move(done),
                  nullptr};
    if (timeout) {
      waiter.timer =
          std::make_unique<net::steady_timer>(hub->executor(), *timeout);
      waiter.timer->async_wait([weak = weak_from_this(), id = waiter.id,
                                ms = timeout->count()](
                                   boost::system::error_code ec) {
        auto self = weak.lock();
        if (ec || !self) return;
        for (auto it = self->waiters.begin(); it != self->waiters.end(); ++it) {
          if (it->id != id) continue;
          auto expired = std::move(it->done);
          self->waiters.erase(it);
          expired(client_error(code::kTimeout, "no matching envelope within " +
                                                   std::to_string(ms) + " ms"));
          return;
        }
      });
    }
    waiters.push_back(std::move(waiter));
    serve_waiters();
  }

  void disconnect() {
    if (disconnected) return;
    disconnected = true;
    auto waiting = std::move(waiters);
    waiters.clear();
    for (Waiter& waiter : waiting) {
      if (waiter.timer) waiter.timer->cancel();
      waiter.done(client_error(code::kClosed, "HumanClient is disconnected"));
    }
  }
};

namespace {

EnvelopeHandler handler_for(const std::shared_ptr<HumanClient::State>& state) {
  return [weak = std::weak_ptr(state)](const Envelope& envelope,
                                       Finished finished) {
    if (auto self = weak.lock()) {
      self->receive(envelope, std::move(finished));
    } else {
      finished(true, "");
    }
  };
}

Handler<Passport> on_registered(std::shared_ptr<HumanClient::State> state,
                                Handler<std::shared_ptr<HumanClient>> done) {
  return [state, done = std::move(done)](Result<Passport> passport) {
    if (!passport) return done(std::unexpected(passport.error()));
    state->passport = std::move(*passport);
    state->agent_id = state->passport.agent_id.value_or("");
    done(std::make_shared<HumanClient>(state));
  };
}

template <typename T>
bool refuse_if_disconnected(const HumanClient::State& state, Handler<T>& done) {
  if (!state.disconnected) return false;
  done(client_error(code::kClosed, "HumanClient is disconnected"));
  return true;
}

}  // namespace

void HumanClient::register_human(std::shared_ptr<HubClient> hub,
                                 Registration registration,
                                 HumanOptions options,
                                 Handler<std::shared_ptr<HumanClient>> done) {
  auto state = std::make_shared<State>();
  state->hub = hub;
  state->options = options;
  hub->register_human(std::move(registration), handler_for(state),
                      on_registered(state, std::move(done)));
}

void HumanClient::attach(std::shared_ptr<HubClient> hub, std::string name,
                         engine::AuthInfo auth, HumanOptions options,
                         Handler<std::shared_ptr<HumanClient>> done) {
  auto state = std::make_shared<State>();
  state->hub = hub;
  state->options = options;
  hub->attach(std::move(name), std::move(auth), handler_for(state),
              on_registered(state, std::move(done)));
}

HumanClient::HumanClient(std::shared_ptr<State> state)
    : state_(std::move(state)) {}

HumanClient::~HumanClient() {
  net::post(state_->hub->executor(), [state = state_] { state->disconnect(); });
}

const Passport& HumanClient::passport() const { return state_->passport; }
const std::string& HumanClient::agent_id() const { return state_->agent_id; }
HubClient& HumanClient::hub_client() const { return *state_->hub; }

void HumanClient::open(OpenRequest request, Handler<ChannelMetadata> done) {
  net::post(state_->hub->executor(),
            [state = state_, request = std::move(request),
             done = std::move(done)]() mutable {
              if (refuse_if_disconnected(*state, done)) return;
              open_channel(state->hub, state->agent_id, std::move(request),
                           std::move(done));
            });
}

void HumanClient::send(std::string channel_id, std::string text,
                       Handler<std::string> done,
                       std::optional<std::vector<std::string>> audience,
                       std::optional<std::string> causation_id) {
  post_envelope(text_envelope(std::move(channel_id), state_->agent_id, text,
                              std::move(audience), std::move(causation_id)),
                std::move(done));
}

void HumanClient::post_envelope(Envelope envelope, Handler<std::string> done) {
  net::post(state_->hub->executor(),
            [state = state_, envelope = std::move(envelope),
             done = std::move(done)]() mutable {
              if (refuse_if_disconnected(*state, done)) return;
              if (envelope.sender_id.empty())
                envelope.sender_id = state->agent_id;
              state->hub->post_envelope(std::move(envelope), std::move(done));
            });
}

void HumanClient::close_channel(std::string channel_id,
                                Handler<ChannelMetadata> done,
                                std::string reason) {
  net::post(state_->hub->executor(),
            [state = state_, channel_id = std::move(channel_id),
             reason = std::move(reason), done = std::move(done)]() mutable {
              if (refuse_if_disconnected(*state, done)) return;
              state->hub->close_channel(std::move(channel_id),
                                        std::move(reason), std::move(done));
            });
}

HumanClient::CallbackId HumanClient::on_envelope(Callback callback) {
  // The id is taken here so the caller has it at once; the callback joins
  // on the strand, before any envelope delivered after this call.
  static std::atomic<CallbackId> next_id = 1;
  const CallbackId id = next_id++;
  net::post(state_->hub->executor(),
            [state = state_, id, callback = std::move(callback)]() mutable {
              state->callbacks.emplace_back(id, std::move(callback));
            });
  return id;
}

void HumanClient::remove_envelope_callback(CallbackId id) {
  net::post(state_->hub->executor(), [state = state_, id] {
    std::erase_if(state->callbacks,
                  [id](const auto& entry) { return entry.first == id; });
  });
}

void HumanClient::next_envelope(
    Predicate predicate, std::optional<std::chrono::milliseconds> timeout,
    Handler<Envelope> done) {
  net::post(state_->hub->executor(),
            [state = state_, predicate = std::move(predicate), timeout,
             done = std::move(done)]() mutable {
              state->add_waiter(std::move(predicate), timeout, std::move(done));
            });
}

namespace {

// One step of for_each_envelope: waits for the next queued envelope. The
// waiter holds the state weakly (the state holds the waiter); a `next`
// called after the state is gone ends the stream.
void stream_from(const std::weak_ptr<HumanClient::State>& weak,
                 HumanClient::StreamStep each, Handler<void> end) {
  auto state = weak.lock();
  if (!state) return end({});
  net::post(state->hub->executor(), [weak, state, each = std::move(each),
                                     end = std::move(end)]() mutable {
    state->add_waiter(
        nullptr, std::nullopt, [weak, each, end](Result<Envelope> envelope) {
          if (!envelope) {
            if (envelope.error().code == code::kClosed) return end({});
            return end(std::unexpected(envelope.error()));
          }
          each(*envelope, [weak, each, end] { stream_from(weak, each, end); });
        });
  });
}

}  // namespace

void HumanClient::for_each_envelope(StreamStep each, Handler<void> end) {
  stream_from(state_, std::move(each), std::move(end));
}

void HumanClient::disconnect() {
  net::post(state_->hub->executor(), [state = state_] { state->disconnect(); });
}

}  // namespace parley::client
