// A WebSocket client for the tests (Beast, plain or TLS): it speaks AG2's
// frames to a running `parley serve` over a real loopback socket. A
// background thread reads every message into a buffer; the test thread
// sends and waits for what it expects.
//
// Thread safety: one test thread uses a client; the reader runs on the
// client's own io thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace parley::testing {

using namespace std::chrono_literals;

class WsTestClient {
 public:
  // Connects to ws://host:port (wss:// when `tls`, accepting any
  // certificate). Throws std::runtime_error when it cannot.
  WsTestClient(std::string host, std::uint16_t port, bool tls = false);
  WsTestClient(const WsTestClient&) = delete;
  WsTestClient& operator=(const WsTestClient&) = delete;
  ~WsTestClient();

  void send_text(std::string text);
  void send_binary(std::string bytes);
  void send(const nlohmann::json& frame) { send_text(frame.dump()); }

  // The next message received (raw text), or nullopt after `timeout`.
  std::optional<std::string> next_text(std::chrono::milliseconds timeout = 5s);
  // The next message parsed (key order kept), or nullopt after `timeout`.
  std::optional<nlohmann::ordered_json> next(
      std::chrono::milliseconds timeout = 5s);
  // The first buffered (or next) message of `kind`; others stay buffered.
  std::optional<nlohmann::ordered_json> next_of_kind(
      std::string_view kind, std::chrono::milliseconds timeout = 5s);

  // Sends a request frame and returns its id.
  std::string send_request(std::string_view op, const nlohmann::json& params);
  // The response to `request_id`; other messages stay buffered. Throws
  // std::runtime_error after `timeout`.
  nlohmann::ordered_json await_response(
      const std::string& request_id, std::chrono::milliseconds timeout = 10s);
  // send_request + await_response.
  nlohmann::ordered_json request(std::string_view op,
                                 const nlohmann::json& params,
                                 std::chrono::milliseconds timeout = 10s);
  // request(), requiring ok; returns the result.
  nlohmann::ordered_json call(std::string_view op,
                              const nlohmann::json& params);
  // Registers `name` (scheme none unless `auth` says otherwise) and
  // returns its agent id.
  std::string register_agent(const std::string& name,
                             nlohmann::json auth = nullptr,
                             nlohmann::json rule = nullptr);

  // Stops reading (a client that does not keep up); resume_reading()
  // starts again.
  void pause_reading();
  void resume_reading();

  // Whether the server closed the connection, and its close code and
  // reason; waits up to `timeout` for the close.
  bool wait_closed(std::chrono::milliseconds timeout = 5s);
  int close_code() const;
  std::string close_reason() const;

  // Messages received and not yet taken.
  std::size_t buffered() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parley::testing
