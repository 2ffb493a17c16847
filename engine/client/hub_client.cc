#include "engine/client/hub_client.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "engine/client/hub_client_impl.h"
#include "engine/client/in_process_link.h"
#include "engine/client/ws_link.h"
#include "engine/json/records_json.h"

namespace parley::client {

namespace net = boost::asio;
using nlohmann::json;

namespace {

// Out of line: GCC 12 inlining a json read through std::expected's storage
// reports a false maybe-uninitialized.
template <typename Parse>
[[gnu::noinline]] auto parse_value(const Parse& parse, const json& value) {
  return parse(value);
}

// Parses an op's JSON result into T with `parse`, or reports kInvalid.
template <typename T, typename Parse>
std::function<void(Result<json>)> parsed(Handler<T> done, Parse parse) {
  return [done = std::move(done), parse](Result<json> result) {
    if (!result) return done(std::unexpected(std::move(result.error())));
    auto value = parse_value(parse, *result);
    if (!value) {
      return done(client_error(code::kInvalid,
                               "unreadable answer: " + value.error().message));
    }
    done(std::move(*value));
  };
}

}  // namespace

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

namespace {

void start(const std::shared_ptr<HubClientImpl>& impl, std::string op,
           json params, std::function<void(Result<json>)> done,
           std::chrono::milliseconds timeout = {}) {
  net::dispatch(impl->strand(),
                [impl, op = std::move(op), params = std::move(params), timeout,
                 done = std::move(done)]() mutable {
                  impl->start_call(std::move(op), std::move(params), timeout,
                                   std::move(done));
                });
}

}  // namespace

void HubClient::get_agent(std::string name_or_id, Handler<Passport> done) {
  start(impl_, "get_agent", {{"name_or_id", std::move(name_or_id)}},
        parsed<Passport>(std::move(done), [](const json& value) {
          return engine::passport_from_json(value);
        }));
}

void HubClient::create_channel(CreateChannelRequest request,
                               Handler<ChannelMetadata> done,
                               std::chrono::milliseconds timeout) {
  json params = {{"creator_id", request.creator_id},
                 {"manifest_type", request.manifest_type},
                 {"manifest_version", request.manifest_version},
                 {"participants", request.participants}};
  if (request.required_acks) params["required_acks"] = *request.required_acks;
  if (request.ttl) {
    std::visit([&](const auto& ttl) { params["ttl"] = ttl; }, *request.ttl);
  }
  if (request.knobs) params["knobs"] = json::parse(*request.knobs);
  if (request.intent) params["intent"] = *request.intent;
  if (request.labels) params["labels"] = json::parse(*request.labels);
  start(impl_, "create_channel", std::move(params),
        parsed<ChannelMetadata>(std::move(done),
                                [](const json& value) {
                                  return engine::channel_metadata_from_json(
                                      value);
                                }),
        timeout);
}

void HubClient::get_channel(std::string channel_id,
                            Handler<ChannelMetadata> done) {
  start(impl_, "get_channel", {{"channel_id", std::move(channel_id)}},
        parsed<ChannelMetadata>(std::move(done), [](const json& value) {
          return engine::channel_metadata_from_json(value);
        }));
}

void HubClient::close_channel(std::string channel_id, std::string reason,
                              Handler<ChannelMetadata> done) {
  start(impl_, "close_channel",
        {{"channel_id", std::move(channel_id)}, {"reason", std::move(reason)}},
        parsed<ChannelMetadata>(std::move(done), [](const json& value) {
          return engine::channel_metadata_from_json(value);
        }));
}

void HubClient::post_envelope(Envelope envelope, Handler<std::string> done) {
  start(impl_, "post_envelope", {{"envelope", engine::to_json(envelope)}},
        parsed<std::string>(
            std::move(done),
            [](const json& value) -> engine::Result<std::string> {
              if (!value.is_string()) {
                return engine::invalid("post_envelope answered a non-string");
              }
              return value.get<std::string>();
            }));
}

void HubClient::read_wal(std::string channel_id,
                         Handler<std::vector<Envelope>> done) {
  start(impl_, "read_wal", {{"channel_id", std::move(channel_id)}},
        parsed<std::vector<Envelope>>(
            std::move(done),
            [](const json& value) -> engine::Result<std::vector<Envelope>> {
              if (!value.is_array()) {
                return engine::invalid("read_wal answered a non-list");
              }
              std::vector<Envelope> envelopes;
              for (const json& item : value) {
                auto parsed = engine::envelope_from_json(item);
                if (!parsed) return std::unexpected(parsed.error());
                envelopes.push_back(std::move(*parsed));
              }
              return envelopes;
            }));
}

void HubClient::can_send(std::string channel_id, std::string sender_id,
                         Handler<bool> done) {
  start(impl_, "can_send",
        {{"channel_id", std::move(channel_id)},
         {"sender_id", std::move(sender_id)}},
        parsed<bool>(std::move(done),
                     [](const json& value) -> engine::Result<bool> {
                       if (!value.is_boolean()) {
                         return engine::invalid("can_send answered a non-bool");
                       }
                       return value.get<bool>();
                     }));
}

void HubClient::find_envelope_by_causation(
    std::string channel_id, std::string sender_id, std::string causation_id,
    Handler<std::optional<Envelope>> done) {
  start(impl_, "find_envelope_by_causation",
        {{"channel_id", std::move(channel_id)},
         {"sender_id", std::move(sender_id)},
         {"causation_id", std::move(causation_id)}},
        parsed<std::optional<Envelope>>(
            std::move(done),
            [](const json& value) -> engine::Result<std::optional<Envelope>> {
              if (value.is_null()) return std::optional<Envelope>();
              auto envelope = engine::envelope_from_json(value);
              if (!envelope) return std::unexpected(envelope.error());
              return std::optional<Envelope>(std::move(*envelope));
            }));
}

void HubClient::names_for(std::vector<std::string> agent_ids,
                          Handler<std::map<std::string, std::string>> done) {
  start(impl_, "names_for", {{"agent_ids", std::move(agent_ids)}},
        parsed<std::map<std::string, std::string>>(
            std::move(done),
            [](const json& value)
                -> engine::Result<std::map<std::string, std::string>> {
              if (!value.is_object()) {
                return engine::invalid("names_for answered a non-object");
              }
              std::map<std::string, std::string> names;
              for (const auto& [id, name] : value.items()) {
                if (!name.is_string()) {
                  return engine::invalid("names_for answered a non-string");
                }
                names.emplace(id, name.get<std::string>());
              }
              return names;
            }));
}

void HubClient::get_skill(std::string agent_id,
                          Handler<std::optional<std::string>> done) {
  start(
      impl_, "get_skill", {{"agent_id", std::move(agent_id)}},
      parsed<std::optional<std::string>>(
          std::move(done),
          [](const json& value) -> engine::Result<std::optional<std::string>> {
            if (value.is_null()) return std::nullopt;
            if (!value.is_string()) {
              return engine::invalid("get_skill answered a non-string");
            }
            return value.get<std::string>();
          }));
}

void HubClient::set_skill(std::string agent_id,
                          std::optional<std::string> skill_md,
                          Handler<void> done) {
  start(impl_, "set_skill",
        {{"agent_id", std::move(agent_id)},
         {"skill_md", skill_md ? json(std::move(*skill_md)) : json(nullptr)}},
        [done = std::move(done)](Result<json> result) {
          if (!result) return done(std::unexpected(std::move(result.error())));
          done({});
        });
}

void HubClient::report_turn_failure(std::string channel_id,
                                    std::string agent_id,
                                    std::string envelope_id, std::string error,
                                    Handler<void> done) {
  start(impl_, "report_turn_failure",
        {{"channel_id", std::move(channel_id)},
         {"agent_id", std::move(agent_id)},
         {"envelope_id", std::move(envelope_id)},
         {"error", std::move(error)}},
        [done = std::move(done)](Result<json> result) {
          if (!result) return done(std::unexpected(std::move(result.error())));
          done({});
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
