// The two links a client test body runs over, with the same interface:
//   InProcessNet  an embedded Hub on a RocksDB store in a scratch directory
//   WsNet         a real `parley serve` (tests/serve_fixture.h) on loopback
// Each runs the clients on its own io thread and exposes the hub for
// assertions on what it recorded (cursors, WALs). Both accept the auth
// schemes "none" and "api_key", with the key "secret" for the agent named
// "keyed" (kKeyedAgent, kKeyedSecret).
//
// Destruction order: clients (test locals) first, then every connection
// still open is closed, then the io thread stops, then the hub or server.
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/client/blocking.h"
#include "engine/client/hub_client.h"
#include "engine/client/human_client.h"
#include "engine/hub/hub.h"
#include "tests/serve_fixture.h"
#include "tests/test_support.h"

namespace parley::testing {

using namespace std::chrono_literals;

inline constexpr const char* kKeyedAgent = "keyed";
inline constexpr const char* kKeyedSecret = "secret";

// Closes every connection it made, and waits for the closes, before its io
// thread stops (a turn still in flight would otherwise keep its client,
// and the connection, open until the server gives up on it).
class OpenedClients {
 public:
  ~OpenedClients() { close_all(); }
  std::shared_ptr<client::HubClient> add(
      std::shared_ptr<client::HubClient> client);
  void close_all();

 private:
  std::vector<std::weak_ptr<client::HubClient>> clients_;
};

class InProcessNet {
 public:
  InProcessNet();
  ~InProcessNet();
  engine::Hub& hub() { return *hub_; }
  std::shared_ptr<client::HubClient> connect(
      client::HubClientOptions options = {});
  boost::asio::any_io_executor executor() const { return io_.executor(); }

 private:
  ScratchDir dir_;
  std::unique_ptr<engine::Hub> hub_;
  client::IoThread io_;
  OpenedClients clients_;  // closed before the io thread stops
};

class WsNet {
 public:
  WsNet();
  engine::Hub& hub() { return serve_->hub(); }
  std::shared_ptr<client::HubClient> connect(
      client::HubClientOptions options = {});
  boost::asio::any_io_executor executor() const { return io_.executor(); }
  std::string url() {
    return "ws://127.0.0.1:" + std::to_string(serve_->port());
  }
  // Restarts `parley serve` on the same store and port.
  void restart_server() { serve_->restart(); }

 private:
  std::unique_ptr<ServeFixture> serve_;
  client::IoThread io_;
  OpenedClients clients_;  // closed before the io thread stops
};

// Envelopes seen by a callback on the io thread, read by the test thread.
class Recorder {
 public:
  void add(const engine::Envelope& envelope);
  // Waits until `done` holds for what was recorded; false after `timeout`.
  bool wait_until(
      const std::function<bool(const std::vector<engine::Envelope>&)>& done,
      std::chrono::milliseconds timeout = 10s);
  // Waits until an envelope of `event_type` has been recorded.
  bool wait_for_type(std::string_view event_type,
                     std::chrono::milliseconds timeout = 10s);
  std::vector<engine::Envelope> all() const;
  // Event types in order.
  std::vector<std::string> types() const;
  // The text of every EV_TEXT, in order.
  std::vector<std::string> texts() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<engine::Envelope> envelopes_;
};

// A certificate for 127.0.0.1 (in its subjectAltName) that is its own CA,
// made by openssl in `dir`: cert.pem and key.pem. REQUIREs that it worked.
struct SelfSignedCertificate {
  std::filesystem::path cert;
  std::filesystem::path key;
};
SelfSignedCertificate self_signed_certificate(const std::filesystem::path& dir);

// Polls `done` every 10 ms until it holds or `timeout` passes.
bool eventually(const std::function<bool()>& done,
                std::chrono::milliseconds timeout = 10s);

}  // namespace parley::testing
