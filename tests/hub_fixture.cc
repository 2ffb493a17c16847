#include "tests/hub_fixture.h"

#include <doctest/doctest.h>

#include <thread>

#include "engine/base/event_types.h"
#include "engine/base/flex_json.h"
#include "engine/ops/invite_reply.h"
#include "log/rocksdb_log_store.h"

namespace parley::testing {

using engine::Envelope;
using nlohmann::json;

TestHub::TestHub(
    std::vector<std::shared_ptr<const engine::ChannelAdapter>> adapters,
    log::RocksDbOptions store)
    : adapters_(std::move(adapters)),
      store_options_(store),
      clock_(std::make_shared<engine::ManualClock>(
          *engine::parse_timestamp("2026-01-01T00:00:00+00:00"))) {
  start();
}

TestHub::~TestHub() {
  ops_.reset();
  hub_.reset();
}

void TestHub::start() {
  auto opened =
      log::open_rocksdb_log_store(dir_.path() / "store", store_options_);
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  engine::HubOptions options{
      .store = std::shared_ptr<log::LogStore>(std::move(opened->store)),
      .clock = clock_,
      .invite_ack_timeout = std::chrono::milliseconds(0),
      .adapters = adapters_};
  if (customize_) customize_(options);
  auto hub = engine::Hub::open(std::move(options));
  REQUIRE_MESSAGE(hub.has_value(), testing::error_message(hub));
  hub_ = std::move(*hub);
  ops_ = std::make_unique<engine::ControlPlane>(*hub_);
  for (const auto& passport : hub_->list_agents({.limit = 1 << 30})) {
    bind(*passport.agent_id);
  }
}

void TestHub::restart() {
  ops_.reset();
  REQUIRE(hub_->close().has_value());
  hub_.reset();
  start();
}

void TestHub::bind(const std::string& agent_id) {
  hub_->subscribe(
      agent_id, [this](const std::string& recipient,
                       const std::shared_ptr<const Envelope>& delivered) {
        const Envelope& envelope = *delivered;
        {
          std::lock_guard lock(inbox_mutex_);
          inboxes_[recipient].push_back(envelope);
        }
        if (envelope.event_type != engine::event_type::kChannelInvite) return;
        auto mode = invitees_.find(recipient);
        const Invitee answer =
            mode == invitees_.end() ? Invitee::kAck : mode->second;
        if (answer == Invitee::kSilent) return;
        (void)hub_->post_envelope(engine::invite_reply(
            envelope, recipient,
            answer == Invitee::kReject
                ? std::optional<std::string_view>("not interested")
                : std::nullopt));
      });
}

std::string TestHub::add_agent(std::string_view name, engine::Resume resume,
                               std::optional<engine::Rule> rule,
                               std::optional<std::string> skill_md,
                               std::optional<std::string> kind) {
  engine::Passport passport{.name = std::string(name)};
  passport.kind = std::move(kind);
  auto registered =
      hub_->register_identity(std::move(passport), std::move(resume),
                              std::move(skill_md), std::move(rule));
  REQUIRE_MESSAGE(registered.has_value(), testing::error_message(registered));
  bind(*registered->agent_id);
  return *registered->agent_id;
}

void TestHub::set_invitee(std::string_view agent_id, Invitee mode) {
  invitees_[std::string(agent_id)] = mode;
}

engine::Result<engine::ChannelMetadata> TestHub::open(
    std::string_view creator, std::string_view type,
    std::vector<std::string> participants, json knobs,
    std::optional<engine::DurationSpec> ttl) {
  return hub_->create_channel({.creator_id = std::string(creator),
                               .manifest_type = std::string(type),
                               .participants = std::move(participants),
                               .ttl = std::move(ttl),
                               .knobs = knobs.dump()});
}

engine::Result<std::string> TestHub::post(
    std::string_view channel, std::string_view sender,
    std::string_view event_type, const json& data,
    std::optional<std::vector<std::string>> audience) {
  Envelope envelope;
  envelope.channel_id = std::string(channel);
  envelope.sender_id = std::string(sender);
  envelope.event_type = std::string(event_type);
  envelope.event_data = engine::to_flex(data).value();
  envelope.audience = std::move(audience);
  return hub_->post_envelope(std::move(envelope));
}

engine::Result<std::string> TestHub::say(
    std::string_view channel, std::string_view sender, std::string_view text,
    std::optional<std::vector<std::string>> audience) {
  return post(channel, sender, engine::event_type::kText, {{"text", text}},
              std::move(audience));
}

std::vector<Envelope> TestHub::wal(std::string_view channel) {
  auto read = hub_->read_wal(channel);
  REQUIRE_MESSAGE(read.has_value(), testing::error_message(read));
  return std::move(*read);
}

std::vector<std::string> TestHub::wal_types(std::string_view channel) {
  std::vector<std::string> out;
  for (const auto& envelope : wal(channel)) out.push_back(envelope.event_type);
  return out;
}

json TestHub::state(std::string_view channel) {
  auto state = hub_->adapter_state(channel);
  REQUIRE(state.has_value());
  return *state ? json::parse(**state) : json(nullptr);
}

std::vector<json> TestHub::audit() {
  auto records = hub_->read_audit();
  REQUIRE(records.has_value());
  std::vector<json> out;
  for (const auto& record : *records) out.push_back(json::parse(record));
  return out;
}

std::vector<Envelope> TestHub::inbox(std::string_view agent_id) const {
  std::lock_guard lock(inbox_mutex_);
  auto it = inboxes_.find(agent_id);
  return it == inboxes_.end() ? std::vector<Envelope>{} : it->second;
}

void HandshakeHub::open() {
  auto store = log::open_rocksdb_log_store(
      dir.path() / "store", {.durability = log::Durability::kAsync});
  REQUIRE_MESSAGE(store.has_value(), testing::error_message(store));
  auto opened = engine::Hub::open(
      {.store = std::shared_ptr<log::LogStore>(std::move(store->store)),
       .clock = clock,
       .invite_ack_timeout = invite_ack_timeout});
  REQUIRE_MESSAGE(opened.has_value(), testing::error_message(opened));
  hub = std::move(*opened);
}

std::string HandshakeHub::add(std::string name, engine::Rule rule) {
  auto passport = hub->register_identity({.name = std::move(name)}, {},
                                         std::nullopt, std::move(rule));
  REQUIRE(passport.has_value());
  return *passport->agent_id;
}

std::string HandshakeHub::await_pending() {
  for (int i = 0; i < 2000; ++i) {
    auto pending =
        hub->list_channels(std::nullopt, engine::ChannelState::kPending);
    if (!pending.empty()) return pending.front().channel_id;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  FAIL("no channel became pending");
  return {};
}

}  // namespace parley::testing
