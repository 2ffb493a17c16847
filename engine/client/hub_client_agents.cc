// HubClientImpl: registering and re-attaching agents.
#include <boost/asio/post.hpp>

#include "engine/client/hub_client_impl.h"
#include "engine/json/records_json.h"

namespace parley::client {

namespace net = boost::asio;
using nlohmann::json;

void HubClientImpl::register_identity(Registration registration,
                                      EnvelopeHandler handler,
                                      Handler<Passport> done) {
  json params = {{"passport", engine::to_json(registration.passport)},
                 {"resume", engine::to_json(registration.resume)}};
  if (registration.skill_md) params["skill_md"] = *registration.skill_md;
  if (registration.rule) params["rule"] = engine::to_json(*registration.rule);
  start_call("register", std::move(params), {},
             [self = shared_from_this(), auth = registration.passport.auth,
              handler = std::move(handler),
              done = std::move(done)](Result<json> result) mutable {
               if (!result)
                 return done(std::unexpected(std::move(result.error())));
               auto passport = engine::passport_from_json(*result);
               if (!passport || !passport->agent_id) {
                 return done(client_error(
                     code::kInvalid, "register answered no stamped passport"));
               }
               // `done` first: a HumanClient learns its own id there, before
               // its first envelope. The hub never echoes the claim; the one
               // registered with is kept for the hellos of later reconnects.
               const Passport stamped = *passport;
               done(std::move(*passport));
               self->add_agent(stamped, auth, std::move(handler));
               if (self->link_) self->link_->registered(*stamped.agent_id);
             });
}

void HubClientImpl::unregister_identity(std::string agent_id,
                                        Handler<void> done) {
  start_call("unregister", {{"agent_id", agent_id}}, {},
             [self = shared_from_this(), agent_id,
              done = std::move(done)](Result<json> result) {
               if (!result) return done(std::unexpected(result.error()));
               self->agents_.erase(agent_id);
               self->orphans_.erase(agent_id);
               if (self->link_) self->link_->unregistered(agent_id);
               done({});
             });
}

void HubClientImpl::attach(std::string name, engine::AuthInfo auth,
                           EnvelopeHandler handler,
                           std::optional<std::string> since,
                           Handler<Passport> done) {
  start_call(
      "get_agent", {{"name_or_id", name}}, {},
      [self = shared_from_this(), name, auth = std::move(auth),
       handler = std::move(handler), since = std::move(since),
       done = std::move(done)](Result<json> result) mutable {
        if (!result) return done(std::unexpected(std::move(result.error())));
        auto passport = engine::passport_from_json(*result);
        if (!passport || !passport->agent_id) {
          return done(client_error(code::kInvalid,
                                   "get_agent answered no stamped passport"));
        }
        if (!self->link_ || self->state_ != State::kUp) {
          return done(client_error(code::kDisconnected, "not connected"));
        }
        // Known before the hello, so the replay after it finds its handler.
        self->add_agent(*passport, auth, std::move(handler));
        const std::string agent_id = *passport->agent_id;
        self->hello(HelloRequest{.name = name,
                                 .auth_scheme = auth.scheme,
                                 .auth_claim = auth.claim,
                                 .since_envelope_id = std::move(since)},
                    [self, agent_id, passport = std::move(*passport),
                     done = std::move(done)](Result<void> hello) mutable {
                      if (!hello) {
                        self->agents_.erase(agent_id);
                        return done(std::unexpected(std::move(hello.error())));
                      }
                      done(std::move(passport));
                    });
      });
}

}  // namespace parley::client
