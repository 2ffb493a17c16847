// What bounds the server's use of descriptors and memory per client:
// the budget of client sockets (max_connections), what it does when
// accept() itself fails for want of file descriptors, and the requests in
// flight, per connection (max_requests_in_flight,
// max_request_bytes_in_flight) and over all of them
// (max_total_request_bytes_in_flight). Over real loopback sockets, with
// each limit made to run out.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/transport/admin_http.h"
#include "tests/serve_fixture.h"

namespace parley {
namespace {

using testing::http_get;
using testing::metric_sample;
using testing::ServeFixture;
using testing::ServeProcess;
using testing::WsTestClient;
using namespace std::chrono_literals;

// Tries `attempt` every 10 ms until it holds (an exception counts as not
// yet: a connection refused at accept); false after 10 s.
bool eventually(const std::function<bool()>& attempt) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    try {
      if (attempt()) return true;
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// A WebSocket client of `port`, once the server has a socket slot free
// (it notices a closed connection asynchronously); nullptr after 10 s.
std::unique_ptr<WsTestClient> connect_when_free(std::uint16_t port) {
  std::unique_ptr<WsTestClient> client;
  eventually([&] {
    client = std::make_unique<WsTestClient>("127.0.0.1", port);
    return true;
  });
  return client;
}

TEST_CASE(
    "a connection beyond max_connections is closed at accept, the others "
    "are served, and a closed connection frees its slot") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.max_connections = 2;
    config.admin = transport::HostPort{"127.0.0.1", 0};
  });
  const std::uint16_t admin = *serve.server().admin_port();
  auto alice = serve.connect();
  alice->register_agent("alice");
  auto bob = serve.connect();
  bob->register_agent("bob");

  CHECK_THROWS_AS(WsTestClient("127.0.0.1", serve.port()), std::runtime_error);
  CHECK(alice->request("find_agent_id", {{"name", "bob"}})["ok"] == true);
  CHECK(bob->request("find_agent_id", {{"name", "alice"}})["ok"] == true);
  const auto metrics = http_get(admin, "/metrics").body;
  CHECK(metric_sample(metrics, "parley_connections_refused_total") == 1);
  CHECK(metric_sample(metrics, "parley_connections_open") == 2);

  bob.reset();
  auto carol = connect_when_free(serve.port());
  REQUIRE(carol != nullptr);
  carol->register_agent("carol");
  CHECK(alice->request("find_agent_id", {{"name", "carol"}})["ok"] == true);
}

// Polls /metrics until `name` reads `value`; false after 10 s.
bool metric_reaches(std::uint16_t admin, const std::string& name,
                    double value) {
  return eventually([&] {
    return metric_sample(http_get(admin, "/metrics").body, name) == value;
  });
}

TEST_CASE(
    "with max_requests_in_flight requests of a connection in flight, the "
    "server reads no more of it until one is answered") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.connection.max_requests_in_flight = 3;
    config.admin = transport::HostPort{"127.0.0.1", 0};
  });
  const std::uint16_t admin = *serve.server().admin_port();
  auto alice_client = serve.connect();
  const std::string alice = alice_client->register_agent("alice");
  auto bob_client = serve.connect();
  const std::string bob = bob_client->register_agent("bob");
  // Each create_channel stays in flight until bob acks its invite.
  std::vector<std::string> creates;
  for (int i = 0; i < 3; ++i) {
    creates.push_back(alice_client->send_request(
        "create_channel", {{"creator_id", alice},
                           {"manifest_type", "conversation"},
                           {"participants", {bob}}}));
  }
  REQUIRE(metric_reaches(admin, "parley_requests_in_flight", 3));
  const std::string lookup =
      alice_client->send_request("find_agent_id", {{"name", "bob"}});
  // Not read, so not answered, while three are in flight.
  CHECK_FALSE(alice_client->next_of_kind("response", 500ms).has_value());
  CHECK(metric_sample(http_get(admin, "/metrics").body,
                      "parley_requests_in_flight") == 3);

  auto invite = bob_client->next_of_kind("notify");
  REQUIRE(invite.has_value());
  testing::ack_invite(*bob_client, *invite);
  CHECK(alice_client->await_response(lookup)["result"] == bob);
  // The other two open as bob acks them; nothing was lost.
  for (int i = 0; i < 2; ++i) {
    auto next = bob_client->next_of_kind("notify");
    REQUIRE(next.has_value());
    testing::ack_invite(*bob_client, *next);
  }
  for (const std::string& create : creates) {
    CHECK(alice_client->await_response(create)["ok"] == true);
  }
  CHECK(metric_reaches(admin, "parley_requests_in_flight", 0));
}

// Sends a create_channel from `creator` inviting `invitee`, with an intent
// of `padding` bytes; it stays in flight until the invitee acks.
std::string send_create(WsTestClient& client, const std::string& creator,
                        const std::string& invitee, std::size_t padding) {
  nlohmann::json params = {{"creator_id", creator},
                           {"manifest_type", "conversation"},
                           {"participants", {invitee}}};
  if (padding > 0) params["intent"] = std::string(padding, 'x');
  return client.send_request("create_channel", params);
}

// Sends three create_channels from `creator` to `invitee` (frames of
// ~1,200 bytes: over 3,000 with the third, not before) and waits until the
// server has all three in flight; their request ids.
std::vector<std::string> hold_three_creates(std::uint16_t admin,
                                            WsTestClient& client,
                                            const std::string& creator,
                                            const std::string& invitee) {
  std::vector<std::string> creates;
  for (int i = 0; i < 3; ++i) {
    creates.push_back(send_create(client, creator, invitee, 1000));
  }
  REQUIRE(metric_reaches(admin, "parley_requests_in_flight", 3));
  return creates;
}

// Acks the next `count` invites `invitee` receives.
void ack_invites(WsTestClient& invitee, int count) {
  for (int i = 0; i < count; ++i) {
    auto invite = invitee.next_of_kind("notify");
    REQUIRE(invite.has_value());
    testing::ack_invite(invitee, *invite);
  }
}

TEST_CASE(
    "with max_request_bytes_in_flight bytes of a connection's requests in "
    "flight, the server reads no more of it until one is answered") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.connection.max_request_bytes_in_flight = 3000;
    config.admin = transport::HostPort{"127.0.0.1", 0};
  });
  const std::uint16_t admin = *serve.server().admin_port();
  auto alice_client = serve.connect();
  const std::string alice = alice_client->register_agent("alice");
  auto bob_client = serve.connect();
  const std::string bob = bob_client->register_agent("bob");
  const std::vector<std::string> creates =
      hold_three_creates(admin, *alice_client, alice, bob);
  CHECK(metric_sample(http_get(admin, "/metrics").body,
                      "parley_request_bytes_in_flight") >= 3000);
  const std::string lookup =
      alice_client->send_request("find_agent_id", {{"name", "bob"}});
  CHECK_FALSE(alice_client->next_of_kind("response", 500ms).has_value());

  ack_invites(*bob_client, 1);
  CHECK(alice_client->await_response(lookup)["result"] == bob);
  ack_invites(*bob_client, 2);
  for (const std::string& create : creates) {
    CHECK(alice_client->await_response(create)["ok"] == true);
  }
  CHECK(metric_reaches(admin, "parley_request_bytes_in_flight", 0));
}

TEST_CASE(
    "with max_total_request_bytes_in_flight spent, a connection with "
    "requests in flight is not read until answers free the budget, while "
    "one with none (the invitee whose acks free it) still is") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.connection.max_total_request_bytes_in_flight = 3000;
    config.admin = transport::HostPort{"127.0.0.1", 0};
  });
  const std::uint16_t admin = *serve.server().admin_port();
  auto alice_client = serve.connect();
  const std::string alice = alice_client->register_agent("alice");
  auto bob_client = serve.connect();
  const std::string bob = bob_client->register_agent("bob");
  auto carol_client = serve.connect();
  const std::string carol = carol_client->register_agent("carol");
  // alice's three frames spend the budget; carol then has one request of
  // her own in flight, so she is held back too.
  const std::vector<std::string> creates =
      hold_three_creates(admin, *alice_client, alice, bob);
  const std::string carols_create = send_create(*carol_client, carol, bob, 0);
  REQUIRE(metric_reaches(admin, "parley_requests_in_flight", 4));
  const std::string lookup =
      carol_client->send_request("find_agent_id", {{"name", "alice"}});
  CHECK_FALSE(carol_client->next_of_kind("response", 500ms).has_value());

  // bob has nothing in flight: he is still read, request after request
  // (each read while the budget is spent), and so is his ack, whose
  // answering alice's first create brings the budget back below its limit.
  for (int i = 0; i < 2; ++i) {
    CHECK(bob_client->request("find_agent_id", {{"name", "carol"}})["result"] ==
          carol);
  }
  ack_invites(*bob_client, 1);
  CHECK(carol_client->await_response(lookup)["result"] == alice);
  ack_invites(*bob_client, 3);
  for (const std::string& create : creates) {
    CHECK(alice_client->await_response(create)["ok"] == true);
  }
  CHECK(carol_client->await_response(carols_create)["ok"] == true);
  CHECK(metric_reaches(admin, "parley_request_bytes_in_flight", 0));
}

TEST_CASE(
    "the admin port holds at most kMaxAdminConnections connections: one "
    "more is closed at accept, and the port serves again once they close") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.admin = transport::HostPort{"127.0.0.1", 0};
  });
  const std::uint16_t admin = *serve.server().admin_port();
  boost::asio::io_context io;
  std::vector<boost::asio::ip::tcp::socket> idle;
  for (std::size_t i = 0; i < transport::kMaxAdminConnections; ++i) {
    idle.emplace_back(io).connect(
        {boost::asio::ip::make_address("127.0.0.1"), admin});
  }
  // Accepted after the idle ones (the kernel's backlog is first in, first
  // out), so refused.
  CHECK_THROWS(http_get(admin, "/metrics"));
  idle.clear();
  CHECK(eventually([&] { return http_get(admin, "/healthz").status == 200; }));
}

// The descriptors `pid` holds open now, and of those its sockets.
std::size_t open_descriptors(pid_t pid, bool sockets_only = false) {
  const std::filesystem::path fds = "/proc/" + std::to_string(pid) + "/fd";
  std::size_t count = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(fds)) {
    if (!sockets_only || std::filesystem::read_symlink(entry.path(), error)
                             .string()
                             .starts_with("socket:")) {
      ++count;
    }
  }
  return count;
}

TEST_CASE(
    "out of file descriptors, the listener retries every 100 ms instead of "
    "failing in a busy loop, logs it once, and serves again once "
    "descriptors are free") {
  testing::ScratchDir dir;
  // No socket budget: the descriptors themselves run out.
  ServeProcess serve(dir.path() / "data", {"--max-connections", "1000000",
                                           "--admin", "127.0.0.1:0"});
  REQUIRE(serve.wait_output("admin on http://127.0.0.1:"));
  std::smatch match;
  const std::string printed = serve.output();
  REQUIRE(std::regex_search(
      printed, match, std::regex(R"(admin on http://127\.0\.0\.1:(\d+))")));
  const auto admin = static_cast<std::uint16_t>(std::stoi(match[1]));
  // A server that has served a connection before, as one in production
  // has, and whose client sockets (the admin requests' too) are all closed
  // again before its descriptors run out: only its two listening sockets
  // stay. (UBSan's type check reads memory through a pipe when its small
  // cache misses, the first time it meets a type and after an eviction; a
  // sanitized server out of descriptors could not, would report a valid
  // object as invalid and exit. Fewer objects at work, fewer checks.)
  {
    WsTestClient first("127.0.0.1", serve.port());
    first.register_agent("first");
  }
  REQUIRE(metric_reaches(admin, "parley_connections_open", 0));
  REQUIRE(eventually([&] { return open_descriptors(serve.pid(), true) == 2; }));

  // A few descriptors more than the server holds: connections take them
  // and the next accept() fails with EMFILE.
  const rlim_t room = open_descriptors(serve.pid()) + 4;
  const rlimit limit{room, room};
  REQUIRE(prlimit(serve.pid(), RLIMIT_NOFILE, &limit, nullptr) == 0);
  boost::asio::io_context io;
  std::vector<boost::asio::ip::tcp::socket> sockets;
  for (int i = 0; i < 16; ++i) {
    sockets.emplace_back(io).connect(
        {boost::asio::ip::make_address("127.0.0.1"), serve.port()});
  }
  REQUIRE(serve.wait_output(
      "accept failed: Too many open files; retrying every 100 ms", 10s));
  std::this_thread::sleep_for(1s);  // exhausted all along
  sockets.clear();

  auto client = connect_when_free(serve.port());
  REQUIRE(client != nullptr);
  client->register_agent("alice");
  const auto metrics = http_get(admin, "/metrics").body;
  const std::optional<double> failures =
      metric_sample(metrics, "parley_accept_failures_total");
  REQUIRE(failures.has_value());
  // A busy loop fails hundreds of thousands of times a second.
  CHECK(*failures >= 1);
  CHECK(*failures <= 100);
  CHECK(serve.stop(SIGTERM) == 0);
  const std::string output = serve.output();
  std::size_t lines = 0;
  for (std::size_t at = output.find("accept failed"); at != std::string::npos;
       at = output.find("accept failed", at + 1)) {
    ++lines;
  }
  CHECK(lines == 1);  // the next would come 10 s later at the earliest
}

}  // namespace
}  // namespace parley
