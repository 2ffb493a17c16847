// A HubClient's connection to a hub, behind one interface: in-process
// (engine/client/in_process_link.h) or WebSocket (engine/client/ws_link.h).
// Internal to the client library.
//
// Threading: every member is called on the owning HubClient's strand, and
// every completion and event is told on that strand, never inline from the
// call that started it. After close() a link tells its LinkEvents nothing
// more; each completion still pending is told once: kClosed over a socket,
// the hub's own answer in-process (the hub carries the op out either way).
//
// Lifetime: owned by shared_ptr (its pending work holds one); a new link is
// made for each (re)connection.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/base/envelope.h"
#include "engine/client/error.h"

namespace parley::client {

// AG2's hello frame: re-attach the agent registered as `name`.
struct HelloRequest {
  std::string name;
  std::string auth_scheme = "none";
  std::string auth_claim = "{}";  // a JSON object's text
  // nullopt: no replay; "": everything the agent has not acked;
  // an id: everything after max(cursor, id).
  std::optional<std::string> since_envelope_id;
};

class LinkEvents {
 public:
  virtual ~LinkEvents() = default;
  // An envelope delivered (live or replayed) to `recipient_id`.
  virtual void on_notify(std::string recipient_id,
                         engine::Envelope envelope) = 0;
  // The connection ended without close(); pending completions have been
  // told kDisconnected first.
  virtual void on_link_lost(std::string why) = 0;
};

class Link {
 public:
  virtual ~Link() = default;

  virtual void open(std::function<void(Result<void>)> done) = 0;
  // One control-plane op: its JSON result, or the hub's error.
  virtual void request(std::string op, nlohmann::json params,
                       std::function<void(Result<nlohmann::json>)> done) = 0;
  // Re-attaches an agent; its replay (when asked) follows `done` as
  // on_notify events.
  virtual void hello(HelloRequest hello,
                     std::function<void(Result<void>)> done) = 0;
  // `agent_id` was just registered through this link: its deliveries come
  // here from now on (a wire `register` binds by itself).
  virtual void registered(const std::string& agent_id) = 0;
  // `agent_id` was unregistered: nothing more is delivered to it here.
  virtual void unregistered(const std::string& agent_id) = 0;
  // A receipt for a handled envelope; fire and forget.
  virtual void receipt(const std::string& recipient_id,
                       const std::string& channel_id,
                       const std::string& envelope_id, std::string_view status,
                       std::string reason) = 0;
  virtual void close() = 0;
};

}  // namespace parley::client
