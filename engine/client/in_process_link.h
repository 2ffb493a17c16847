// The in-process link: an embedded engine::Hub reached through the op
// layer's non-blocking ControlPlane::call (no Caller: an in-process caller
// is trusted), its deliveries through Hub::subscribe, its receipts through
// Hub::acknowledge, and a hello through Hub::authenticate + replay_for, as
// `parley serve` does for a connection.
//
// Threading: as Link. Hub deliveries arrive on hub threads and are posted to
// the strand; nothing here blocks on the hub except the reads a hello does
// (authenticate, replay_for), which take the hub's shared lock only.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/client/link.h"
#include "engine/client/strand.h"
#include "engine/hub/hub.h"
#include "engine/ops/control_plane.h"

namespace parley::client {

class InProcessLink : public Link,
                      public std::enable_shared_from_this<InProcessLink> {
 public:
  // `hub` must outlive the link and every call it started.
  InProcessLink(Strand strand, engine::Hub& hub,
                std::weak_ptr<LinkEvents> events);
  ~InProcessLink() override;

  void open(std::function<void(Result<void>)> done) override;
  void request(std::string op, nlohmann::json params,
               std::function<void(Result<nlohmann::json>)> done) override;
  void hello(HelloRequest hello,
             std::function<void(Result<void>)> done) override;
  void registered(const std::string& agent_id) override;
  void unregistered(const std::string& agent_id) override;
  void receipt(const std::string& recipient_id, const std::string& channel_id,
               const std::string& envelope_id, std::string_view status,
               std::string reason) override;
  void close() override;

 private:
  // Shared with the hub's delivery callbacks, which may outlive the link:
  // once closed they drop what they get.
  struct Gate {
    std::atomic<bool> open = true;
    // On the strand only. A hello subscribes its agent before it reads the
    // replay, so a live delivery can arrive before replayed envelopes of
    // its channel that precede it: while a replay to an agent is under way
    // (`replays` begun, not yet told), its live deliveries are held, and
    // told after the replay in the order they came (the client drops what
    // the replay already carried).
    struct Replaying {
      int replays = 0;
      std::vector<std::shared_ptr<const engine::Envelope>> held;
    };
    std::map<std::string, Replaying, std::less<>> replaying;
  };

  void subscribe(const std::string& agent_id);

  Strand strand_;
  engine::Hub& hub_;
  engine::ControlPlane plane_;
  std::weak_ptr<LinkEvents> events_;
  std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();
  std::set<std::string> subscribed_;
};

}  // namespace parley::client
