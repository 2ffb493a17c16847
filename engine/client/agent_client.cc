#include "engine/client/agent_client.h"

#include <atomic>
#include <boost/asio/post.hpp>

#include "engine/adapters/builtin_adapters.h"
#include "engine/client/default_handler.h"
#include "engine/client/envelopes.h"

namespace parley::client {

namespace net = boost::asio;

namespace {

AgentOptions with_defaults(AgentOptions options) {
  if (!options.adapters) {
    auto registry = std::make_shared<engine::AdapterRegistry>();
    for (auto& adapter : engine::builtin_adapters()) {
      registry->add(std::move(adapter));
    }
    options.adapters = std::move(registry);
  }
  if (options.max_model_calls < 1) options.max_model_calls = 1;
  return options;
}

std::string reason_of(const Error& error) {
  return error.code + ": " + error.message;
}

}  // namespace

AgentClient::AgentClient(PrivateTag, std::shared_ptr<HubClient> hub,
                         std::shared_ptr<Model> model, AgentOptions options)
    : hub_(std::move(hub)),
      model_(std::move(model)),
      options_(with_defaults(std::move(options))) {}

AgentClient::~AgentClient() = default;

EnvelopeHandler AgentClient::handler_for(
    const std::shared_ptr<AgentClient>& self) {
  return [weak = std::weak_ptr(self)](const Envelope& envelope,
                                      Finished finished) {
    if (auto client = weak.lock()) {
      client->receive(envelope, std::move(finished));
    } else {
      finished(true, "");
    }
  };
}

Handler<Passport> AgentClient::on_registered(
    std::shared_ptr<AgentClient> self,
    Handler<std::shared_ptr<AgentClient>> done) {
  return [self = std::move(self),
          done = std::move(done)](Result<Passport> passport) {
    if (!passport) return done(std::unexpected(passport.error()));
    self->passport_ = std::move(*passport);
    self->agent_id_ = self->passport_.agent_id.value_or("");
    done(self);
  };
}

void AgentClient::register_agent(std::shared_ptr<HubClient> hub,
                                 Registration registration,
                                 std::shared_ptr<Model> model,
                                 AgentOptions options,
                                 Handler<std::shared_ptr<AgentClient>> done) {
  auto self = std::make_shared<AgentClient>(PrivateTag{}, hub, std::move(model),
                                            std::move(options));
  hub->register_agent(std::move(registration), handler_for(self),
                      on_registered(self, std::move(done)));
}

void AgentClient::attach(std::shared_ptr<HubClient> hub, std::string name,
                         engine::AuthInfo auth, std::shared_ptr<Model> model,
                         AgentOptions options,
                         Handler<std::shared_ptr<AgentClient>> done) {
  auto self = std::make_shared<AgentClient>(PrivateTag{}, hub, std::move(model),
                                            std::move(options));
  hub->attach(std::move(name), std::move(auth), handler_for(self),
              on_registered(self, std::move(done)));
}

void AgentClient::receive(const Envelope& envelope, Finished finished) {
  if (disconnected_) return finished(true, "");
  if (auto watcher = watchers_.find(envelope.channel_id);
      watcher != watchers_.end()) {
    // A copy: the watcher may unwatch its channel.
    const ChannelWatcher watch = watcher->second;
    watch(envelope);
    return finished(true, "");
  }
  ChannelQueue& queue = queues_[envelope.channel_id];
  queue.waiting.push_back({envelope, std::move(finished)});
  if (!queue.busy) run_next(envelope.channel_id);
}

void AgentClient::run_next(const std::string& channel_id) {
  auto found = queues_.find(channel_id);
  if (found == queues_.end()) return;
  ChannelQueue& queue = found->second;
  if (queue.waiting.empty()) {
    queues_.erase(found);
    return;
  }
  Inbound next = std::move(queue.waiting.front());
  queue.waiting.pop_front();
  if (disconnected_) {
    next.finished(true, "");
    return run_next(channel_id);
  }
  queue.busy = true;
  auto once = std::make_shared<std::atomic<bool>>(false);
  Handler<void> done = [self = shared_from_this(), once, channel_id,
                        finished = next.finished](Result<void> result) {
    if (once->exchange(true)) return;
    net::post(self->hub_->executor(), [self, channel_id, finished, result] {
      if (result) {
        finished(true, "");
      } else {
        self->hub_->log("the handler of '" + self->passport_.name +
                        "' failed: " + reason_of(result.error()));
        finished(false, reason_of(result.error()));
      }
      if (auto queue = self->queues_.find(channel_id);
          queue != self->queues_.end()) {
        queue->second.busy = false;
      }
      self->run_next(channel_id);
    });
  };
  try {
    if (handler_) {
      handler_(next.envelope, done);
    } else {
      default_handler(next.envelope, *this, done);
    }
  } catch (const std::exception& e) {
    done(client_error(code::kInvalid,
                      std::string("the handler threw: ") + e.what()));
  }
}

void AgentClient::on_envelope(AgentHandler handler) {
  net::post(hub_->executor(),
            [self = shared_from_this(), handler = std::move(handler)] {
              self->handler_ = handler;
            });
}

void AgentClient::remove_envelope_handler() { on_envelope(nullptr); }

void AgentClient::set_view(std::string channel_id,
                           std::shared_ptr<const ViewPolicy> view) {
  net::post(hub_->executor(),
            [self = shared_from_this(), channel_id = std::move(channel_id),
             view = std::move(view)]() mutable {
              if (view) {
                self->view_overrides_.insert_or_assign(std::move(channel_id),
                                                       std::move(view));
              } else {
                self->view_overrides_.erase(channel_id);
              }
            });
}

std::shared_ptr<const ViewPolicy> AgentClient::view_override(
    std::string_view channel_id) const {
  const auto found = view_overrides_.find(channel_id);
  return found == view_overrides_.end() ? nullptr : found->second;
}

void AgentClient::open(OpenRequest request, Handler<ChannelMetadata> done) {
  net::post(hub_->executor(), [self = shared_from_this(),
                               request = std::move(request),
                               done = std::move(done)]() mutable {
    if (self->disconnected_) {
      return done(client_error(code::kClosed, "AgentClient is disconnected"));
    }
    open_channel(self->hub_, self->agent_id_, std::move(request),
                 std::move(done));
  });
}

void AgentClient::send(std::string channel_id, std::string text,
                       Handler<std::string> done,
                       std::optional<std::vector<std::string>> audience,
                       std::optional<std::string> causation_id) {
  send_envelope(text_envelope(std::move(channel_id), agent_id_, text,
                              std::move(audience), std::move(causation_id)),
                std::move(done));
}

void AgentClient::send_envelope(Envelope envelope, Handler<std::string> done) {
  net::post(hub_->executor(), [self = shared_from_this(),
                               envelope = std::move(envelope),
                               done = std::move(done)]() mutable {
    if (self->disconnected_) {
      return done(client_error(code::kClosed, "AgentClient is disconnected"));
    }
    if (envelope.sender_id.empty()) envelope.sender_id = self->agent_id_;
    self->hub_->post_envelope(std::move(envelope), std::move(done));
  });
}

void AgentClient::watch_channel(std::string channel_id,
                                ChannelWatcher watcher) {
  watchers_.insert_or_assign(std::move(channel_id), std::move(watcher));
}

void AgentClient::unwatch_channel(std::string_view channel_id) {
  if (auto found = watchers_.find(channel_id); found != watchers_.end()) {
    watchers_.erase(found);
  }
}

void AgentClient::disconnect() {
  net::post(hub_->executor(),
            [self = shared_from_this()] { self->disconnected_ = true; });
}

}  // namespace parley::client
