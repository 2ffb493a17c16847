// What keeps a served hub healthy: TLS (wss://), WebSocket keepalive, the
// admin port (/healthz, /metrics), the TTL sweep on a timer.
#include <doctest/doctest.h>
#include <time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <optional>
#include <thread>

#include "engine/hub/hub.h"
#include "tests/serve_fixture.h"

namespace parley {
namespace {

using nlohmann::json;
using testing::http_get;
using testing::metric_sample;
using testing::ServeFixture;
using testing::WsTestClient;
using namespace std::chrono_literals;

// Spins until this thread has used `at_least` of CPU; returns what it used.
double burn_cpu(std::chrono::nanoseconds at_least) {
  auto used = [] {
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return std::chrono::seconds(now.tv_sec) +
           std::chrono::nanoseconds(now.tv_nsec);
  };
  const auto start = used();
  auto spent = used() - start;
  while (spent < at_least) spent = used() - start;
  return std::chrono::duration<double>(spent).count();
}

// The value of the sample `name` (with its labels) in a /metrics body.
double metric_value(const std::string& body, const std::string& name) {
  const std::optional<double> value = metric_sample(body, name);
  REQUIRE_MESSAGE(value.has_value(), name);
  return *value;
}

TEST_CASE("wss:// with a self-signed certificate: a TLS round trip") {
  testing::ScratchDir certs;
  const auto cert = certs.path() / "cert.pem";
  const auto key = certs.path() / "key.pem";
  auto made = testing::run_command(
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
      "-keyout " +
      key.string() + " -out " + cert.string());
  REQUIRE_MESSAGE(made.exit_code == 0, made.err);
  ServeFixture serve([&](transport::ServerConfig& config) {
    config.tls_cert = cert;
    config.tls_key = key;
  });
  CHECK(serve.server().url().starts_with("wss://127.0.0.1:"));
  auto client = serve.connect(/*tls=*/true);
  const std::string alice = client->register_agent("alice");
  CHECK(client->call("get_agent", {{"name_or_id", alice}})["name"] == "alice");
  // A plain client cannot speak to it.
  CHECK_THROWS(WsTestClient("127.0.0.1", serve.port(), /*tls=*/false));
}

TEST_CASE(
    "a client that answers pings stays connected, one that does not "
    "is closed with 1011 'keepalive ping timeout'") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.connection.ping_interval = 150ms;
    config.connection.ping_timeout = 150ms;
    config.connection.handshake_timeout = 1s;
  });
  auto live = serve.connect();
  // A raw client: the WebSocket handshake by hand, then it never reads,
  // so it never answers a ping.
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket mute(io);
  mute.connect({boost::asio::ip::make_address("127.0.0.1"), serve.port()});
  const std::string upgrade =
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
      "Sec-WebSocket-Version: 13\r\n\r\n";
  boost::asio::write(mute, boost::asio::buffer(upgrade));
  std::this_thread::sleep_for(1s);
  CHECK(live->call("find_agent_id", {{"name", "x"}}).is_null());
  // Everything the server sent: the 101, pings (0x89), then a close frame
  // (0x88) with code 1011 and the reason, then the socket ends.
  std::string bytes;
  boost::system::error_code ec;
  char buffer[4096];
  while (true) {
    const std::size_t n = mute.read_some(boost::asio::buffer(buffer), ec);
    if (ec) break;
    bytes.append(buffer, n);
  }
  CHECK(bytes.starts_with("HTTP/1.1 101"));
  CHECK(bytes.find('\x89') != std::string::npos);
  const std::string close_payload =
      std::string("\x03\xf3", 2) + "keepalive ping timeout";
  const auto at = bytes.find(close_payload);
  REQUIRE(at != std::string::npos);
  CHECK(static_cast<unsigned char>(bytes[at - 2]) == 0x88);
  CHECK_FALSE(live->wait_closed(100ms));
}

TEST_CASE(
    "the admin port serves /healthz (the hub's health) and /metrics "
    "(Prometheus text)") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.admin = transport::HostPort{"127.0.0.1", 0};
  });
  REQUIRE(serve.server().admin_port().has_value());
  const std::uint16_t admin = *serve.server().admin_port();
  auto client = serve.connect();
  const std::string alice = client->register_agent("alice");
  (void)client->request("get_agent", {{"name_or_id", "ghost"}});

  auto health = http_get(admin, "/healthz");
  CHECK(health.status == 200);
  CHECK(health.content_type == "application/json");
  const json body = json::parse(health.body);
  CHECK(body["registered_agents"] == 1);
  CHECK(body["serving"] == true);

  const double burned_seconds = burn_cpu(std::chrono::milliseconds(30));
  auto metrics = http_get(admin, "/metrics");
  CHECK(metrics.status == 200);
  for (const char* line :
       {"parley_connections_open 1\n", "parley_connections_total 1\n",
        "parley_requests_total{op=\"register\",outcome=\"ok\"} 1\n",
        "parley_requests_total{op=\"get_agent\",outcome=\"not_found\"} 1\n",
        "# TYPE parley_notifies_sent_total counter\n",
        "parley_send_queue_overflows_total 0\n",
        "parley_connections_refused_total 0\n", "parley_requests_in_flight 0\n",
        "parley_request_bytes_in_flight 0\n", "parley_send_queue_bytes 0\n",
        "parley_accept_failures_total 0\n", "parley_hub_registered_agents 1\n",
        "# TYPE parley_heap_allocated_bytes gauge\n",
        "# TYPE process_resident_memory_bytes gauge\n"}) {
    CHECK_MESSAGE(metrics.body.find(line) != std::string::npos, line);
  }
  auto value_of = [&](const std::string& name) {
    return metric_value(metrics.body, name);
  };
  CHECK(value_of("process_resident_memory_bytes") > 1 << 20);
  // The server's own threads, by name, and the process's CPU: at least
  // what this thread burned before the scrape.
  for (const char* thread :
       {"parley-io", "parley-commit", "parley-log", "parley-sweep"}) {
    const std::string series = "parley_thread_cpu_seconds_total{thread=\"" +
                               std::string(thread) + "\"}";
    CHECK_MESSAGE(metrics.body.find("\n" + series + " ") != std::string::npos,
                  series);
  }
  // Counted in clock ticks (10 ms), rounded down.
  CHECK(value_of("process_cpu_seconds_total") >= burned_seconds - 0.01);
  // Every record of the fresh store was written by a group commit.
  CHECK(metrics.body.find("# TYPE parley_log_group_records histogram\n") !=
        std::string::npos);
  CHECK(value_of("parley_hub_log_sequence") >= 1);
  CHECK(value_of("parley_log_group_records_sum") ==
        value_of("parley_hub_log_sequence"));
  CHECK(value_of("parley_log_group_records_bucket{le=\"+Inf\"}") ==
        value_of("parley_log_group_records_count"));
  CHECK(value_of("parley_log_group_records_count") >= 1);
  CHECK(value_of("parley_log_group_write_seconds_count") ==
        value_of("parley_log_group_records_count"));
  CHECK(value_of("parley_log_group_write_seconds_sum") > 0);
  // Each answered request is timed, by op.
  CHECK(metrics.body.find("# TYPE parley_request_seconds histogram\n") !=
        std::string::npos);
  CHECK(value_of("parley_request_seconds_count{op=\"register\"}") == 1);
  CHECK(
      value_of("parley_request_seconds_bucket{op=\"get_agent\",le=\"+Inf\"}") ==
      1);
  CHECK(value_of("parley_request_seconds_bucket{op=\"register\",le=\"10\"}") ==
        1);
  CHECK(value_of("parley_request_seconds_sum{op=\"register\"}") > 0);
  CHECK(http_get(admin, "/nope").status == 404);
}

TEST_CASE(
    "/metrics lists post_envelope from its first answer on, each post by "
    "outcome, and times every one") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.admin = transport::HostPort{"127.0.0.1", 0};
  });
  const std::uint16_t admin = *serve.server().admin_port();
  auto alice_client = serve.connect();
  auto bob_client = serve.connect();
  const std::string alice = alice_client->register_agent("alice");
  const std::string bob = bob_client->register_agent("bob");
  CHECK(http_get(admin, "/metrics").body.find("op=\"post_envelope\"") ==
        std::string::npos);

  const std::string channel =
      testing::open_channel(*alice_client, alice, *bob_client, bob);
  for (const char* text : {"one", "two"}) {
    alice_client->call("post_envelope",
                       testing::text_envelope(channel, alice, text));
  }
  auto refused = alice_client->request(
      "post_envelope", testing::text_envelope("no-such-channel", alice, "x"));
  CHECK(refused["ok"] == false);

  // open_channel posted bob's ack too, without waiting for its answer:
  // three posts answered ok in all, once that one's is.
  const std::string ok_posts =
      "\nparley_requests_total{op=\"post_envelope\",outcome=\"ok\"} 3\n";
  std::string body;
  for (int i = 0; i < 100; ++i) {
    body = http_get(admin, "/metrics").body;
    if (body.find(ok_posts) != std::string::npos) break;
    std::this_thread::sleep_for(50ms);
  }
  REQUIRE(body.find(ok_posts) != std::string::npos);
  auto value_of = [&](const std::string& name) {
    return metric_value(body, name);
  };
  CHECK(value_of("parley_posts_total") == 3);
  const std::string code = refused["error_code"].get<std::string>();
  CHECK(value_of("parley_requests_total{op=\"post_envelope\",outcome=\"" +
                 code + "\"}") == 1);
  CHECK(value_of("parley_request_seconds_count{op=\"post_envelope\"}") == 4);
  CHECK(value_of(
            "parley_request_seconds_bucket{op=\"post_envelope\",le=\"60\"}") ==
        4);
  CHECK(value_of("parley_request_seconds_sum{op=\"post_envelope\"}") > 0);
}

TEST_CASE(
    "the TTL sweep runs on a timer while serving: an expired channel "
    "is expired and its participants notified") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.ttl_sweep_interval = 100ms;
  });
  auto a = serve.connect();
  auto b = serve.connect();
  const std::string alice = a->register_agent("alice");
  const std::string bob = b->register_agent("bob");
  const std::string create =
      a->send_request("create_channel", {{"creator_id", alice},
                                         {"manifest_type", "conversation"},
                                         {"participants", {bob}},
                                         {"ttl", 1}});
  auto invite = b->next_of_kind("notify");
  REQUIRE(invite.has_value());
  testing::ack_invite(*b, *invite);
  const std::string channel = a->await_response(create)["result"]["channel_id"];
  bool expired = false;
  for (int i = 0; i < 50 && !expired; ++i) {
    std::this_thread::sleep_for(100ms);
    expired =
        a->call("get_channel", {{"channel_id", channel}})["state"] == "expired";
  }
  CHECK(expired);
  // The state is readable as soon as the expiry is committed; the notice
  // reaches bob through his connection after it, so it gets a deadline of its
  // own (a loaded sanitizer build can take seconds).
  bool notified = false;
  while (!notified) {
    auto frame = b->next_of_kind("notify", 10s);
    if (!frame) break;
    notified = (*frame)["envelope"]["event_type"] == "ag2.channel.expired";
  }
  CHECK(notified);
}

}  // namespace
}  // namespace parley
