// `parley serve` for tests: an in-process transport::Server on a RocksDB
// store in a scratch directory, listening on a free loopback port, and
// the parley binary as a child process for what only a process shows
// (signals, kill -9, the printed URL).
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/transport/server.h"
#include "tests/test_support.h"
#include "tests/ws_test_client.h"

namespace parley::testing {

class ServeFixture {
 public:
  // `customize` adjusts the configuration (listen 127.0.0.1:0, sweeps off)
  // before the server starts.
  explicit ServeFixture(
      std::function<void(transport::ServerConfig&)> customize = {});
  ~ServeFixture();

  std::unique_ptr<WsTestClient> connect(bool tls = false);
  transport::Server& server() { return *server_; }
  engine::Hub& hub() { return server_->hub(); }
  std::uint16_t port() { return server_->port(); }
  const std::filesystem::path& dir() const { return dir_.path(); }
  // Drains and stops the server; later calls do nothing.
  void stop();
  // Stops the server and starts a new one on the same store and port (a
  // hub restart, as its clients see it).
  void restart();

 private:
  void start();

  ScratchDir dir_;
  transport::ServerConfig config_;
  std::unique_ptr<transport::Server> server_;
};

// An HTTP answer from the admin port.
struct HttpAnswer {
  unsigned status = 0;
  std::string content_type;
  std::string body;
};

// GET `target` from http://127.0.0.1:`port` (one request, one connection).
HttpAnswer http_get(std::uint16_t port, const std::string& target);

// The value of the sample `name` (labels included) in a /metrics body;
// nullopt when the body has no such sample.
std::optional<double> metric_sample(const std::string& body,
                                    const std::string& name);

// Posts bob's ack for `invite` (a notify frame) from `client`.
void ack_invite(WsTestClient& client, const nlohmann::ordered_json& invite);

// The envelope params for a text post.
nlohmann::json text_envelope(const std::string& channel,
                             const std::string& sender, const std::string& text,
                             nlohmann::json audience = nullptr);

// Opens a channel of `type` from `creator` (on `creator_client`) with
// `invitee` (on `invitee_client`), acking the invite; returns its id.
std::string open_channel(WsTestClient& creator_client,
                         const std::string& creator,
                         WsTestClient& invitee_client,
                         const std::string& invitee,
                         const std::string& type = "conversation");

// `parley serve` as a child process; its stdout is read until it prints
// "listening on ws://HOST:PORT".
class ServeProcess {
 public:
  // Starts PARLEY_BINARY serve --data `data` --listen 127.0.0.1:0 plus
  // `arguments`. REQUIREs that it prints its URL within 30 s, unless not
  // `wait_listening` (a standby, which listens only once it took its
  // store over: call wait_listening() then).
  ServeProcess(const std::filesystem::path& data,
               std::vector<std::string> arguments = {},
               bool wait_listening = true);
  ~ServeProcess();  // SIGKILL if still running

  // Reads its output until it printed its URL (port() and url() are known
  // from then on); false if it did not within `timeout`, or exited.
  bool wait_listening(std::chrono::milliseconds timeout = 30s);
  // Reads its output until it holds `text`; false as above.
  bool wait_output(std::string_view text,
                   std::chrono::milliseconds timeout = 30s);
  std::uint16_t port() const { return port_; }
  const std::string& url() const { return url_; }
  pid_t pid() const { return pid_; }
  // Sends `signal` (0: none, just wait); returns the exit code (or 128 + the
  // killing signal) once it ends, waiting at most `timeout`; -1 on timeout.
  int stop(int signal, std::chrono::milliseconds timeout = 30s);
  // Everything it printed on stdout and stderr so far (after stop()).
  std::string output() const { return output_; }

 private:
  // Reads output until `done` says so; false at `timeout` or EOF.
  bool read_until(const std::function<bool()>& done,
                  std::chrono::milliseconds timeout);

  pid_t pid_ = -1;
  int out_ = -1;
  std::uint16_t port_ = 0;
  std::string url_;
  std::string output_;
};

}  // namespace parley::testing
