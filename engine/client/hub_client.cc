#include "engine/client/hub_client.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "engine/client/hub_client_impl.h"
#include "engine/client/in_process_link.h"
#include "engine/client/ws_link.h"

namespace parley::client {

namespace net = boost::asio;
using nlohmann::json;

std::shared_ptr<HubClient> HubClient::in_process(net::any_io_executor executor,
                                                 engine::Hub& hub,
                                                 HubClientOptions options) {
  Strand strand = net::make_strand(executor);
  auto impl = std::make_shared<HubClientImpl>(
      strand,
      [strand, &hub](std::weak_ptr<LinkEvents> events) {
        return std::make_shared<InProcessLink>(strand, hub, std::move(events));
      },
      /*in_process=*/true, std::move(options));
  net::dispatch(strand, [impl] { impl->connect_link([](Result<void>) {}); });
  return std::make_shared<HubClient>(impl);
}

void HubClient::connect(net::any_io_executor executor, std::string_view url,
                        HubClientOptions options,
                        Handler<std::shared_ptr<HubClient>> done) {
  Strand strand = net::make_strand(executor);
  auto parsed_url = parse_ws_url(url);
  if (!parsed_url) {
    return net::post(strand,
                     [done = std::move(done), error = parsed_url.error()] {
                       done(std::unexpected(error));
                     });
  }
  std::shared_ptr<TlsTrust> tls;
  if (parsed_url->tls) {
    auto made = make_tls_trust(options.tls_ca_file);
    if (!made) {
      return net::post(strand, [done = std::move(done), error = made.error()] {
        done(std::unexpected(error));
      });
    }
    tls = std::move(*made);
  }
  if (!options.log) options.log = default_log();
  auto factory = [strand, url = *parsed_url, tls,
                  log = options.log](std::weak_ptr<LinkEvents> events) {
    return make_ws_link(strand, url, tls, std::move(events), log);
  };
  auto impl = std::make_shared<HubClientImpl>(strand, std::move(factory), false,
                                              std::move(options));
  net::dispatch(strand, [impl, done = std::move(done)]() mutable {
    impl->connect_link([impl, done = std::move(done)](Result<void> up) {
      if (!up) return done(std::unexpected(up.error()));
      done(std::make_shared<HubClient>(impl));
    });
  });
}

HubClient::HubClient(std::shared_ptr<HubClientImpl> impl)
    : impl_(std::move(impl)) {}

HubClient::~HubClient() { close(); }

net::any_io_executor HubClient::executor() const { return impl_->strand(); }

bool HubClient::is_in_process() const { return impl_->in_process(); }

void HubClient::log(std::string_view line) const { impl_->log(line); }

void HubClient::register_agent(Registration registration,
                               EnvelopeHandler handler,
                               Handler<Passport> done) {
  if (registration.passport.kind == "human") {
    return net::post(impl_->strand(), [done = std::move(done)] {
      done(client_error(code::kInvalid,
                        "register() does not accept kind='human'; use "
                        "register_human()"));
    });
  }
  net::dispatch(
      impl_->strand(), [impl = impl_, r = std::move(registration),
                        h = std::move(handler), d = std::move(done)]() mutable {
        impl->register_identity(std::move(r), std::move(h), std::move(d));
      });
}

void HubClient::register_human(Registration registration,
                               EnvelopeHandler handler,
                               Handler<Passport> done) {
  auto& kind = registration.passport.kind;
  if (kind && *kind != "human") {
    return net::post(impl_->strand(), [done = std::move(done), k = *kind] {
      done(client_error(code::kInvalid,
                        "register_human() requires kind='human' (or None); "
                        "got '" +
                            k + "'"));
    });
  }
  kind = "human";
  net::dispatch(
      impl_->strand(), [impl = impl_, r = std::move(registration),
                        h = std::move(handler), d = std::move(done)]() mutable {
        impl->register_identity(std::move(r), std::move(h), std::move(d));
      });
}

void HubClient::attach(std::string name, engine::AuthInfo auth,
                       EnvelopeHandler handler, Handler<Passport> done,
                       std::optional<std::string> since_envelope_id) {
  net::dispatch(impl_->strand(),
                [impl = impl_, name = std::move(name), auth = std::move(auth),
                 h = std::move(handler), d = std::move(done),
                 since = std::move(since_envelope_id)]() mutable {
                  impl->attach(std::move(name), std::move(auth), std::move(h),
                               std::move(since), std::move(d));
                });
}

void HubClient::unregister(std::string agent_id, Handler<void> done) {
  net::dispatch(impl_->strand(), [impl = impl_, id = std::move(agent_id),
                                  d = std::move(done)]() mutable {
    impl->unregister_identity(std::move(id), std::move(d));
  });
}

void HubClient::call(std::string op, std::string params_json,
                     Handler<std::string> done,
                     std::chrono::milliseconds timeout) {
  json params = json::parse(params_json, nullptr, false);
  if (params.is_discarded() || !params.is_object()) {
    return net::post(impl_->strand(), [done = std::move(done)] {
      done(client_error(code::kInvalid, "params must be a JSON object"));
    });
  }
  net::dispatch(impl_->strand(), [impl = impl_, op = std::move(op),
                                  params = std::move(params), timeout,
                                  done = std::move(done)]() mutable {
    impl->start_call(std::move(op), std::move(params), timeout,
                     [done = std::move(done)](Result<json> result) {
                       if (!result) {
                         return done(std::unexpected(result.error()));
                       }
                       done(result->dump());
                     });
  });
}

void HubClient::disconnect() {
  net::dispatch(impl_->strand(), [impl = impl_] { impl->disconnect(); });
}

void HubClient::reconnect(Handler<void> done) {
  net::dispatch(impl_->strand(), [impl = impl_, done = std::move(done)] {
    impl->connect_link(done);
  });
}

void HubClient::close() {
  net::dispatch(impl_->strand(), [impl = impl_] { impl->close(); });
}

}  // namespace parley::client
