// A hub for tests: RocksDB in a scratch directory, a manual clock, invitees
// that answer invites as AG2's HumanClient does (ack by default), a record
// of every delivery, and restart().
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/clock.h"
#include "engine/hub/hub.h"
#include "engine/ops/control_plane.h"
#include "log/rocksdb_log_store.h"
#include "tests/test_support.h"

namespace parley::testing {

class TestHub {
 public:
  enum class Invitee { kAck, kReject, kSilent };

  // The clock starts at 2026-01-01T00:00:00+00:00. Extra adapters are
  // registered at every (re)start.
  // `store` configures the RocksDB store (async durability by default).
  explicit TestHub(
      std::vector<std::shared_ptr<const engine::ChannelAdapter>> adapters = {},
      log::RocksDbOptions store = {.durability = log::Durability::kAsync});
  ~TestHub();

  engine::Hub& hub() { return *hub_; }
  engine::ControlPlane& ops() { return *ops_; }
  engine::ManualClock& clock() { return *clock_; }
  const std::filesystem::path& data() const { return dir_.path(); }

  // Closes the hub and opens a new one on the same store, with the same
  // adapters; deliveries seen so far are kept.
  void restart();
  // The custom adapters of the next restart.
  void set_adapters(
      std::vector<std::shared_ptr<const engine::ChannelAdapter>> adapters) {
    adapters_ = std::move(adapters);
  }
  // Applied to the hub's options at every later (re)start, after the
  // fixture's own settings (listeners, arbiter, evaluators, ...).
  void set_options(std::function<void(engine::HubOptions&)> customize) {
    customize_ = std::move(customize);
  }

  // Registers `name` (REQUIREs success) and returns its agent id.
  std::string add_agent(std::string_view name, engine::Resume resume = {},
                        std::optional<engine::Rule> rule = std::nullopt,
                        std::optional<std::string> skill_md = std::nullopt,
                        std::optional<std::string> kind = std::nullopt);

  void set_invitee(std::string_view agent_id, Invitee mode);

  // create_channel; `knobs` is a JSON object.
  engine::Result<engine::ChannelMetadata> open(
      std::string_view creator, std::string_view type,
      std::vector<std::string> participants,
      nlohmann::json knobs = nlohmann::json::object(),
      std::optional<engine::DurationSpec> ttl = std::nullopt);

  engine::Result<std::string> post(
      std::string_view channel, std::string_view sender,
      std::string_view event_type, const nlohmann::json& data,
      std::optional<std::vector<std::string>> audience = std::nullopt);
  engine::Result<std::string> say(
      std::string_view channel, std::string_view sender, std::string_view text,
      std::optional<std::vector<std::string>> audience = std::nullopt);

  std::vector<engine::Envelope> wal(std::string_view channel);
  std::vector<std::string> wal_types(std::string_view channel);
  nlohmann::json state(std::string_view channel);  // adapter state
  std::vector<nlohmann::json> audit();

  // Every envelope delivered to `agent_id`, in delivery order.
  std::vector<engine::Envelope> inbox(std::string_view agent_id) const;

 private:
  void start();
  void bind(const std::string& agent_id);

  ScratchDir dir_;
  std::vector<std::shared_ptr<const engine::ChannelAdapter>> adapters_;
  std::function<void(engine::HubOptions&)> customize_;
  log::RocksDbOptions store_options_;
  std::shared_ptr<engine::ManualClock> clock_;
  std::unique_ptr<engine::Hub> hub_;
  std::unique_ptr<engine::ControlPlane> ops_;
  std::map<std::string, Invitee, std::less<>> invitees_;
  mutable std::mutex inbox_mutex_;
  std::map<std::string, std::vector<engine::Envelope>, std::less<>> inboxes_;
};

// A hub on RocksDB with nobody answering invites: create_channel waits up
// to `invite_ack_timeout` while a test acts on the pending channel from
// another thread. open() (re)opens the hub on the same store.
struct HandshakeHub {
  explicit HandshakeHub(std::chrono::milliseconds invite_ack_timeout)
      : invite_ack_timeout(invite_ack_timeout) {}

  void open();
  // Registers `name` (REQUIREs success) and returns its agent id.
  std::string add(std::string name, engine::Rule rule = {});
  // Waits until some channel is pending and returns its id.
  std::string await_pending();

  ScratchDir dir;
  std::shared_ptr<engine::ManualClock> clock =
      std::make_shared<engine::ManualClock>(
          *engine::parse_timestamp("2026-01-01T00:00:00+00:00"));
  std::chrono::milliseconds invite_ack_timeout;
  std::unique_ptr<engine::Hub> hub;
};

}  // namespace parley::testing
