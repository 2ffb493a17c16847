#include "tests/soak/soak_workload.h"

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "engine/client/blocking.h"
#include "engine/client/envelopes.h"
#include "engine/client/hub_client.h"

namespace parley::soak {

namespace net = boost::asio;
using client::Envelope;
using client::HubClient;
using client::Result;
namespace event_type = client::event_type;

std::string_view cycle_name(CycleKind kind) {
  switch (kind) {
    case CycleKind::kConsulting:
      return "consulting";
    case CycleKind::kDiscussion:
      return "discussion";
    case CycleKind::kWorkflow:
      return "workflow";
    case CycleKind::kTtl:
      return "ttl";
    case CycleKind::kThrowAwayAgent:
      return "throw_away_agent";
  }
  return "?";
}

namespace {

constexpr std::size_t kUnexpectedKept = 20;

// An agent of the workload: the connection it is bound to and its id.
struct Agent {
  std::shared_ptr<HubClient> hub;
  std::string id;
};

// What one run of a cycle carries from step to step.
struct Scratch {
  std::string channel;
  std::string question;  // the consulting question's envelope id
  Agent throw_away;
};

// A step of a cycle: starts one call and tells `done` whether it succeeded.
using StepDone = std::function<void(bool ok)>;
using Step = std::function<void(const std::shared_ptr<Scratch>&, StepDone)>;

std::string workflow_knobs(const std::string& first_speaker) {
  return R"({"graph": {"initial_speaker": ")" + first_speaker +
         R"(", "transitions": [{"when": {"name": "context_equals", "args": )"
         R"({"key": "approved", "value": true}}, "then": {"name": )"
         R"("terminate", "args": {"reason": "approved"}}, "priority": 0}, )"
         R"({"when": {"name": "always", "args": {}}, "then": {"name": )"
         R"("round_robin", "args": {}}, "priority": 1}], "default_target": )"
         R"(null, "max_turns": 10}})";
}

std::string packet(std::string_view body, bool approved) {
  return std::string(R"({"routing": {"kind": "text"}, "context_updates": )") +
         R"({"set": {")" + (approved ? "approved" : "draft") +
         R"(": true}, "delete": []}, "body": ")" + std::string(body) + "\"}";
}

}  // namespace

struct Workload::State : std::enable_shared_from_this<State> {
  net::any_io_executor executor;
  WorkloadOptions options;
  Agent alice, bob, carol;
  std::string talk;

  std::atomic<bool> stopping = false;
  std::atomic<bool> restarting = false;
  std::atomic<std::int64_t> in_flight = 0;
  std::atomic<std::uint64_t> talk_posts = 0;
  std::array<std::atomic<std::uint64_t>, kCycleKinds> cycles{};
  std::atomic<std::uint64_t> channels_created = 0;
  std::atomic<std::uint64_t> ttl_closes = 0;
  std::atomic<std::uint64_t> expected_failures = 0;
  std::atomic<std::uint64_t> unexpected_failures = 0;
  std::atomic<std::uint64_t> throw_away_serial = 0;
  std::atomic<std::uint64_t> throw_aways_registered = 0;
  std::atomic<std::uint64_t> throw_aways_unregistered = 0;

  mutable std::mutex mutex;  // guards the two vectors
  std::vector<std::string> acked_talk_ids;
  std::vector<std::string> unexpected;

  void failed(std::string_view what, const client::Error& error) {
    // Only the TTL cycle's channels live a second (the others hours): on a
    // slow machine (a sanitizer build) one may expire before its invite
    // was acked or its post made, which is the sweep doing its work.
    const bool expired =
        error.message.find("ttl_expired") != std::string::npos ||
        error.message.find("is expired") != std::string::npos;
    if (restarting || stopping || expired) {
      ++expected_failures;
      return;
    }
    ++unexpected_failures;
    std::lock_guard lock(mutex);
    if (unexpected.size() < kUnexpectedKept) {
      unexpected.push_back(std::string(what) + ": " + error.code + ": " +
                           error.message);
    }
  }

  // Wraps `next` as the completion of one call: counted in flight until
  // `next` has run (so work it starts is counted before this ends), and a
  // failure recorded.
  template <typename T, typename Next>
  client::Handler<T> tracked(std::string what, Next next) {
    ++in_flight;
    return [self = shared_from_this(), what = std::move(what),
            next = std::move(next)](Result<T> result) mutable {
      if (!result) self->failed(what, result.error());
      next(std::move(result));
      --self->in_flight;
    };
  }

  // Runs `then` after `delay` unless the workload is stopping.
  void after(std::chrono::milliseconds delay, std::function<void()> then) {
    ++in_flight;
    auto timer = std::make_shared<net::steady_timer>(executor, delay);
    timer->async_wait([self = shared_from_this(), timer,
                       then = std::move(then)](boost::system::error_code) {
      if (!self->stopping) then();
      --self->in_flight;
    });
  }

  // Acks invites (as AG2's default handler does) and finishes everything;
  // carol also counts the channels the TTL sweep closed.
  client::EnvelopeHandler handler(std::shared_ptr<HubClient> hub,
                                  std::shared_ptr<const std::string> self_id,
                                  bool counts_ttl) {
    return [weak_state = weak_from_this(),
            weak_hub = std::weak_ptr<HubClient>(hub), self_id,
            counts_ttl](const Envelope& envelope, client::Finished finished) {
      auto state = weak_state.lock();
      auto hub = weak_hub.lock();
      if (!state || !hub) return finished(true, "");
      if (envelope.event_type == event_type::kChannelInvite &&
          envelope.sender_id != *self_id) {
        hub->post_envelope(
            client::invite_ack(envelope, *self_id),
            state->tracked<std::string>(
                "invite ack", [finished](Result<std::string> posted) {
                  finished(posted.has_value(),
                           posted ? "" : posted.error().message);
                }));
        return;
      }
      if (counts_ttl &&
          (envelope.event_type == event_type::kChannelClosed ||
           envelope.event_type == event_type::kChannelExpired) &&
          client::event_data_json(envelope).find("ttl_expired") !=
              std::string::npos) {
        ++state->ttl_closes;
      }
      finished(true, "");
    };
  }

  // AG2's pending-inbox counter is approximate back-pressure: +1 per
  // delivery, -1 per post of the recipient, never lowered by receipts. An
  // agent that receives more than it posts (carol, bob here) climbs
  // without bound and would be refused at the default cap of 1000, so the
  // workload's agents register without a cap.
  static client::Registration uncapped(std::string name) {
    client::Registration registration;
    registration.passport.name = std::move(name);
    engine::Rule rule;
    rule.limits.inbox_max_pending = 0;
    registration.rule = rule;
    return registration;
  }

  Agent register_agent(const std::string& name, bool counts_ttl) {
    const client::Registration registration = uncapped(name);
    auto connected = client::wait<std::shared_ptr<HubClient>>([&](auto done) {
      client::HubClientOptions client_options;
      client_options.log = options.log;
      HubClient::connect(executor, options.url, client_options, done);
    });
    if (!connected) {
      throw std::runtime_error("connecting to " + options.url + ": " +
                               connected.error().message);
    }
    Agent agent{*connected, ""};
    auto id = std::make_shared<std::string>();
    auto passport = client::wait<client::Passport>([&](auto done) {
      agent.hub->register_agent(registration,
                                handler(agent.hub, id, counts_ttl), done);
    });
    if (!passport) {
      throw std::runtime_error("registering " + name + ": " +
                               passport.error().message);
    }
    *id = agent.id = *passport->agent_id;
    return agent;
  }

  // --- the talk conversation ------------------------------------------------

  void post_talk(const Agent& sender, std::uint64_t serial) {
    if (stopping) return;
    sender.hub->post_envelope(
        client::text_envelope(talk, sender.id,
                              "talk " + std::to_string(serial)),
        tracked<std::string>("talk post", [self = shared_from_this(), sender,
                                           serial](Result<std::string> posted) {
          if (!posted) {
            self->after(std::chrono::milliseconds(100), [self, sender, serial] {
              self->post_talk(sender, serial + 1);
            });
            return;
          }
          ++self->talk_posts;
          {
            std::lock_guard lock(self->mutex);
            self->acked_talk_ids.push_back(std::move(*posted));
          }
          self->post_talk(sender, serial + 1);
        }));
  }

  // --- cycles ---------------------------------------------------------------

  Step create(std::function<Agent(const Scratch&)> creator, std::string type,
              std::function<std::vector<std::string>(const Scratch&)> others,
              std::optional<std::int64_t> ttl = {},
              std::optional<std::string> knobs = {}) {
    return [self = shared_from_this(), creator, type, others, ttl, knobs](
               const std::shared_ptr<Scratch>& scratch, StepDone done) {
      const Agent by = creator(*scratch);
      engine::CreateChannelRequest request;
      request.creator_id = by.id;
      request.manifest_type = type;
      request.participants = others(*scratch);
      if (ttl) request.ttl = *ttl;
      request.knobs = knobs;
      by.hub->create_channel(
          std::move(request),
          self->tracked<client::ChannelMetadata>(
              "create " + type,
              [self, scratch, done](Result<client::ChannelMetadata> created) {
                if (created) {
                  ++self->channels_created;
                  scratch->channel = created->channel_id;
                }
                done(created.has_value());
              }));
    };
  }

  // A post by `sender` of `type` with `data` (a JSON object's text);
  // `audience` names agents, nullopt broadcasts. `is_question` keeps its
  // id; `answers` posts it as the answer to the kept question.
  Step post(
      std::function<Agent(const Scratch&)> sender, std::string type,
      std::string data,
      std::function<std::optional<std::vector<std::string>>(const Scratch&)>
          audience = {},
      bool is_question = false, bool answers = false) {
    return [self = shared_from_this(), sender, type, data, audience,
            is_question,
            answers](const std::shared_ptr<Scratch>& scratch, StepDone done) {
      const Agent by = sender(*scratch);
      auto envelope =
          client::make_envelope(scratch->channel, by.id, type, data,
                                audience ? audience(*scratch) : std::nullopt);
      if (!envelope) {
        self->failed("build " + type, envelope.error());
        return done(false);
      }
      if (answers) envelope->causation_id = scratch->question;
      by.hub->post_envelope(
          std::move(*envelope),
          self->tracked<std::string>(
              "post " + type,
              [scratch, is_question, done](Result<std::string> posted) {
                if (posted && is_question) scratch->question = *posted;
                done(posted.has_value());
              }));
    };
  }

  Step close(std::function<Agent(const Scratch&)> closer) {
    return [self = shared_from_this(), closer](
               const std::shared_ptr<Scratch>& scratch, StepDone done) {
      closer(*scratch).hub->close_channel(
          scratch->channel, "done",
          self->tracked<client::ChannelMetadata>(
              "close_channel", [done](Result<client::ChannelMetadata> closed) {
                done(closed.has_value());
              }));
    };
  }

  std::vector<Step> steps(CycleKind kind) {
    auto alice_ = [a = alice](const Scratch&) { return a; };
    auto bob_ = [b = bob](const Scratch&) { return b; };
    auto carol_ = [c = carol](const Scratch&) { return c; };
    auto temp_ = [](const Scratch& s) { return s.throw_away; };
    auto to = [](std::vector<std::string> ids) {
      return [ids](const Scratch&) { return ids; };
    };
    auto only = [](std::string id) {
      return [id](const Scratch&) {
        return std::optional<std::vector<std::string>>({id});
      };
    };
    const std::string text = std::string(event_type::kText);
    const std::string packet_type = std::string(event_type::kPacket);
    switch (kind) {
      case CycleKind::kConsulting:
        return {create(alice_, "consulting", to({carol.id})),
                post(alice_, text, R"({"text": "What is 6 x 7?"})",
                     only(carol.id), /*is_question=*/true),
                post(carol_, text, R"({"text": "42"})", {}, false,
                     /*answers=*/true)};
      case CycleKind::kDiscussion:
        return {create(alice_, "discussion", to({bob.id, carol.id})),
                post(alice_, text, R"({"text": "topic: the plan"})"),
                post(bob_, text, R"({"text": "the numbers work"})"),
                post(carol_, text, R"({"text": "agreed"})"), close(alice_)};
      case CycleKind::kWorkflow:
        return {create(alice_, "workflow", to({bob.id, carol.id}), {},
                       workflow_knobs(alice.id)),
                post(alice_, packet_type, packet("draft 1", false)),
                post(bob_, text, R"({"text": "numbers checked"})"),
                post(carol_, packet_type, packet("approved", true))};
      case CycleKind::kTtl:
        return {create(carol_, "conversation", to({bob.id}), 1),
                post(carol_, text, R"({"text": "left to expire"})")};
      case CycleKind::kThrowAwayAgent:
        return {register_throw_away(),
                create(temp_, "conversation", to({bob.id})),
                post(temp_, text, R"({"text": "hello and goodbye"})"),
                close(temp_), unregister_throw_away()};
    }
    return {};
  }

  Step register_throw_away() {
    return [self = shared_from_this()](const std::shared_ptr<Scratch>& scratch,
                                       StepDone done) {
      const client::Registration registration =
          uncapped(self->options.name_prefix + "temp-" +
                   std::to_string(++self->throw_away_serial));
      auto id = std::make_shared<std::string>();
      self->carol.hub->register_agent(
          registration, self->handler(self->carol.hub, id, false),
          self->tracked<client::Passport>(
              "register throw-away",
              [self, scratch, id, done](Result<client::Passport> passport) {
                if (passport) {
                  ++self->throw_aways_registered;
                  *id = *passport->agent_id;
                  scratch->throw_away = {self->carol.hub, *id};
                }
                done(passport.has_value());
              }));
    };
  }

  Step unregister_throw_away() {
    return [self = shared_from_this()](const std::shared_ptr<Scratch>& scratch,
                                       StepDone done) {
      self->carol.hub->unregister(
          scratch->throw_away.id,
          self->tracked<void>("unregister", [self, done](Result<void> gone) {
            if (gone) ++self->throw_aways_unregistered;
            done(gone.has_value());
          }));
    };
  }

  void start_cycle(CycleKind kind) {
    if (stopping) return;
    auto all = std::make_shared<std::vector<Step>>(steps(kind));
    run_step(kind, all, std::make_shared<Scratch>(), 0);
  }

  void run_step(CycleKind kind, std::shared_ptr<std::vector<Step>> all,
                std::shared_ptr<Scratch> scratch, std::size_t index) {
    if (stopping) return;
    if (index == all->size()) {
      ++cycles[static_cast<std::size_t>(kind)];
      after(options.cycle_pause,
            [self = shared_from_this(), kind] { self->start_cycle(kind); });
      return;
    }
    (*all)[index](scratch, [self = shared_from_this(), kind, all, scratch,
                            index](bool ok) {
      if (ok) return self->run_step(kind, all, scratch, index + 1);
      // A failed cycle starts over; what it left open stays open.
      self->after(std::chrono::milliseconds(200),
                  [self, kind] { self->start_cycle(kind); });
    });
  }
};

std::unique_ptr<Workload> Workload::start(net::any_io_executor executor,
                                          WorkloadOptions options) {
  auto state = std::make_shared<State>();
  state->executor = std::move(executor);
  state->options = std::move(options);
  const std::string& prefix = state->options.name_prefix;
  state->alice = state->register_agent(prefix + "alice", false);
  state->bob = state->register_agent(prefix + "bob", false);
  state->carol = state->register_agent(prefix + "carol", true);
  engine::CreateChannelRequest request;
  request.creator_id = state->alice.id;
  request.manifest_type = "conversation";
  request.participants = {state->bob.id};
  request.ttl = std::string("24h");
  auto talk = client::wait<client::ChannelMetadata>(
      [&](auto done) { state->alice.hub->create_channel(request, done); });
  if (!talk) {
    throw std::runtime_error("opening the talk conversation: " +
                             talk.error().message);
  }
  ++state->channels_created;
  state->talk = talk->channel_id;
  return std::unique_ptr<Workload>(new Workload(std::move(state)));
}

Workload::Workload(std::shared_ptr<State> state) : state_(std::move(state)) {}

Workload::~Workload() {
  stop(std::chrono::seconds(10));
  for (const Agent* agent : {&state_->alice, &state_->bob, &state_->carol}) {
    agent->hub->close();
  }
}

const std::string& Workload::talk_channel() const { return state_->talk; }

void Workload::run() {
  net::post(state_->executor, [state = state_] {
    for (int i = 0; i < state->options.window; ++i) {
      state->post_talk(state->alice, static_cast<std::uint64_t>(i) << 40);
      state->post_talk(state->bob, (static_cast<std::uint64_t>(i) << 40) + 1);
    }
    for (std::size_t kind = 0; kind < kCycleKinds; ++kind) {
      state->start_cycle(static_cast<CycleKind>(kind));
    }
  });
}

bool Workload::stop(std::chrono::milliseconds timeout) {
  state_->stopping = true;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (state_->in_flight > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void Workload::set_restarting(bool restarting) {
  state_->restarting = restarting;
}

WorkloadCounts Workload::counts() const {
  WorkloadCounts counts;
  counts.talk_posts = state_->talk_posts;
  for (std::size_t kind = 0; kind < kCycleKinds; ++kind) {
    counts.cycles[kind] = state_->cycles[kind];
  }
  counts.channels_created = state_->channels_created;
  counts.ttl_closes_seen = state_->ttl_closes;
  counts.agents_registered =
      3 + state_->throw_aways_registered - state_->throw_aways_unregistered;
  counts.expected_failures = state_->expected_failures;
  counts.unexpected_failures = state_->unexpected_failures;
  return counts;
}

std::vector<std::string> Workload::unexpected() const {
  std::lock_guard lock(state_->mutex);
  return state_->unexpected;
}

std::vector<std::string> Workload::acked_talk_ids() const {
  std::lock_guard lock(state_->mutex);
  return state_->acked_talk_ids;
}

}  // namespace parley::soak
