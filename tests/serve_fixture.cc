#include "tests/serve_fixture.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <regex>
#include <thread>

#include "log/rocksdb_log_store.h"

namespace parley::testing {

using nlohmann::json;

std::optional<double> metric_sample(const std::string& body,
                                    const std::string& name) {
  const std::string key = "\n" + name + " ";
  const std::size_t at = body.find(key);
  if (at == std::string::npos) return std::nullopt;
  return std::stod(body.substr(at + key.size()));
}

HttpAnswer http_get(std::uint16_t port, const std::string& target) {
  namespace beast = boost::beast;
  namespace http = beast::http;
  boost::asio::io_context io;
  boost::asio::ip::tcp::resolver resolver(io);
  beast::tcp_stream stream(io);
  stream.connect(resolver.resolve("127.0.0.1", std::to_string(port)));
  http::request<http::empty_body> request{http::verb::get, target, 11};
  request.set(http::field::host, "127.0.0.1");
  http::write(stream, request);
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(stream, buffer, response);
  return {response.result_int(),
          std::string(response[http::field::content_type]), response.body()};
}

ServeFixture::ServeFixture(
    std::function<void(transport::ServerConfig&)> customize) {
  config_.data = dir_.path() / "store";
  config_.listen = {"127.0.0.1", 0};
  config_.ttl_sweep_interval = std::chrono::milliseconds(0);
  config_.expectation_sweep_interval = std::chrono::milliseconds(0);
  config_.invite_ack_timeout = std::chrono::seconds(10);
  config_.drain_timeout = std::chrono::seconds(5);
  if (customize) customize(config_);
  start();
}

void ServeFixture::start() {
  auto opened = log::open_rocksdb_log_store(config_.data);
  REQUIRE_MESSAGE(opened.has_value(), error_message(opened));
  auto server = transport::Server::start(
      config_, std::shared_ptr<log::LogStore>(std::move(opened->store)));
  REQUIRE_MESSAGE(server.has_value(), error_message(server));
  server_ = std::move(*server);
}

ServeFixture::~ServeFixture() { stop(); }

void ServeFixture::stop() {
  if (server_) server_->shutdown();
}

void ServeFixture::restart() {
  const std::uint16_t port = server_->port();
  stop();
  server_.reset();
  config_.listen.port = port;
  start();
}

std::unique_ptr<WsTestClient> ServeFixture::connect(bool tls) {
  return std::make_unique<WsTestClient>("127.0.0.1", port(), tls);
}

json text_envelope(const std::string& channel, const std::string& sender,
                   const std::string& text, json audience) {
  return {{"envelope",
           {{"channel_id", channel},
            {"sender_id", sender},
            {"audience", std::move(audience)},
            {"event_type", "ag2.msg.text"},
            {"event_data", {{"text", text}}}}}};
}

void ack_invite(WsTestClient& client, const nlohmann::ordered_json& invite) {
  const auto& envelope = invite["envelope"];
  const std::string channel = envelope["channel_id"];
  client.send_request("post_envelope",
                      {{"envelope",
                        {{"channel_id", channel},
                         {"sender_id", invite["recipient_id"]},
                         {"audience", nullptr},
                         {"event_type", "ag2.channel.invite.ack"},
                         {"event_data", {{"channel_id", channel}}},
                         {"causation_id", envelope["envelope_id"]}}}});
}

std::string open_channel(WsTestClient& creator_client,
                         const std::string& creator,
                         WsTestClient& invitee_client,
                         const std::string& invitee, const std::string& type) {
  const std::string id = creator_client.send_request(
      "create_channel", {{"creator_id", creator},
                         {"manifest_type", type},
                         {"participants", {invitee}}});
  auto invite = invitee_client.next_of_kind("notify");
  REQUIRE(invite.has_value());
  REQUIRE((*invite)["envelope"]["event_type"] == "ag2.channel.invite");
  ack_invite(invitee_client, *invite);
  auto response = creator_client.await_response(id);
  REQUIRE_MESSAGE(response["ok"] == true, response.dump());
  REQUIRE(response["result"]["state"] == "active");
  return response["result"]["channel_id"];
}

ServeProcess::ServeProcess(const std::filesystem::path& data,
                           std::vector<std::string> arguments,
                           bool wait_listening) {
  int pipe_fds[2];
  REQUIRE(pipe(pipe_fds) == 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<std::string> args = {PARLEY_BINARY, "serve",    "--data",
                                   data.string(), "--listen", "127.0.0.1:0"};
  args.insert(args.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  REQUIRE(posix_spawn(&pid_, PARLEY_BINARY, &actions, nullptr, argv.data(),
                      environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  out_ = pipe_fds[0];
  if (wait_listening) {
    REQUIRE_MESSAGE(this->wait_listening(30s),
                    "parley serve printed: " << output_);
  }
}

bool ServeProcess::wait_listening(std::chrono::milliseconds timeout) {
  const std::regex listening(R"(listening on (wss?://127\.0\.0\.1:(\d+)))");
  std::smatch match;
  if (!read_until([&] { return std::regex_search(output_, match, listening); },
                  timeout)) {
    return false;
  }
  url_ = match[1];
  port_ = static_cast<std::uint16_t>(std::stoi(match[2]));
  return true;
}

bool ServeProcess::wait_output(std::string_view text,
                               std::chrono::milliseconds timeout) {
  return read_until([&] { return output_.find(text) != std::string::npos; },
                    timeout);
}

bool ServeProcess::read_until(const std::function<bool()>& done,
                              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd poll_fd{out_, POLLIN, 0};
    if (poll(&poll_fd, 1, static_cast<int>(left.count())) <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(out_, buffer, sizeof buffer);
    if (n <= 0) return false;
    output_.append(buffer, static_cast<std::size_t>(n));
  }
  return true;
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) close(out_);
}

int ServeProcess::stop(int signal, std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  if (signal != 0) kill(pid_, signal);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  fcntl(out_, F_SETFL, O_NONBLOCK);
  while (std::chrono::steady_clock::now() < deadline) {
    char buffer[4096];
    ssize_t n;
    while ((n = read(out_, buffer, sizeof buffer)) > 0) {
      output_.append(buffer, static_cast<std::size_t>(n));
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      while ((n = read(out_, buffer, sizeof buffer)) > 0) {
        output_.append(buffer, static_cast<std::size_t>(n));
      }
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(10ms);
  }
  return -1;
}

}  // namespace parley::testing
