// Bad input over a real socket: each gets AG2's reaction (skipped, or an
// error frame protocol_error for a wrongly typed field), the connection
// stays open unless the message is too large or breaks the WebSocket
// protocol, every other connection keeps being served, and nothing is
// written to the log.
#include <doctest/doctest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "engine/hub/hub.h"
#include "log/log_store.h"
#include "tests/serve_fixture.h"
#include "tests/ws_client_frame.h"

namespace parley {
namespace {

using nlohmann::json;
using testing::ServeFixture;
using testing::WsTestClient;
using namespace std::chrono_literals;

// Sends `frame` and then a ping: the pong proves the frame was read and
// the connection is still open. Returns whatever came before the pong.
std::vector<nlohmann::ordered_json> answers_to(WsTestClient& client,
                                               const std::string& frame,
                                               bool binary = false) {
  if (binary) {
    client.send_binary(frame);
  } else {
    client.send_text(frame);
  }
  client.send_text(R"({"kind": "ping"})");
  std::vector<nlohmann::ordered_json> out;
  while (auto next = client.next(5s)) {
    if ((*next)["kind"] == "pong") return out;
    out.push_back(*next);
  }
  FAIL("no pong: the connection was closed or stalled");
  return out;
}

std::uint64_t log_length(ServeFixture& serve) {
  return serve.hub().store().last_sequence();
}

TEST_CASE(
    "frames that are not JSON objects, of an unknown kind, or with "
    "unexpected or missing keys are skipped, the connection stays "
    "open and nothing is written") {
  ServeFixture serve;
  auto client = serve.connect();
  const std::string alice = client->register_agent("alice");
  const auto before = log_length(serve);
  for (
      const std::string& frame :
      {std::string("not json"), std::string("[1, 2]"), std::string("{}"),
       std::string(R"({"kind": 7})"),
       std::string(R"({"kind": "subscribe", "channel_id": "x"})"),
       std::string(
           R"({"request_id": "r1", "op": "unregister", "params": {"agent_id": ")" +
           alice + R"("}, "kind": "request", "extra": 1})"),
       std::string(R"({"op": "get_agent", "params": {}, "kind": "request"})"),
       std::string(R"({"name": "alice", "colour": "red", "kind": "hello"})"),
       std::string(R"({"kind": "ping", "x": 1})"),
       std::string(R"({"envelope_id": "e", "kind": "receipt"})"),
       std::string(R"({"request_id": "r", "ok": true, "kind": "response"})")}) {
    CAPTURE(frame);
    CHECK(answers_to(*client, frame).empty());
  }
  CHECK(log_length(serve) == before);
  CHECK(client->call("get_agent", {{"name_or_id", alice}})["name"] == "alice");
}

TEST_CASE(
    "a wrongly typed field gets error protocol_error 'malformed <kind> "
    "frame: <field>' and the connection stays open") {
  ServeFixture serve;
  auto client = serve.connect();
  const auto before = log_length(serve);
  const std::pair<std::string, std::string> cases[] = {
      {R"({"request_id": 5, "op": "get_agent", "params": {}, "kind": "request"})",
       "malformed request frame: request_id"},
      {R"({"request_id": "r", "op": null, "params": {}, "kind": "request"})",
       "malformed request frame: op"},
      {R"({"request_id": "r", "op": "register", "params": [], "kind": "request"})",
       "malformed request frame: params"},
      {R"({"name": 1, "kind": "hello"})", "malformed hello frame: name"},
      {R"({"name": "a", "auth_scheme": false, "kind": "hello"})",
       "malformed hello frame: auth_scheme"},
      {R"({"name": "a", "since_envelope_id": 3, "kind": "hello"})",
       "malformed hello frame: since_envelope_id"},
      {R"({"envelope_id": "e", "status": 1, "kind": "receipt"})",
       "malformed receipt frame: status"},
      {R"({"envelope_id": "e", "status": "ack", "channel_id": [], "kind": "receipt"})",
       "malformed receipt frame: channel_id"},
  };
  for (const auto& item : cases) {
    // Not bindings: a lambda captures them, which clang 14 cannot.
    const auto& frame = item.first;
    const auto& message = item.second;
    CAPTURE(frame);
    auto answers = answers_to(*client, frame);
    REQUIRE(answers.size() == 1);
    CHECK(answers[0].dump() ==
          nlohmann::ordered_json({{"code", "protocol_error"},
                                  {"message", message},
                                  {"envelope_id", nullptr},
                                  {"kind", "error"}})
              .dump());
    CHECK(answers[0].begin().key() == "code");
  }
  CHECK(log_length(serve) == before);
}

TEST_CASE(
    "bad params and unknown ops are ok=false responses with AG2's "
    "codes, nothing is written") {
  ServeFixture serve;
  auto client = serve.connect();
  const auto before = log_length(serve);
  auto unknown = client->request("frobnicate", json::object());
  CHECK(unknown.dump() ==
        R"({"request_id":")" + unknown["request_id"].get<std::string>() +
            R"(","ok":false,"result":null,"error_code":"protocol_error",)"
            R"("error_message":"unknown control-plane op: 'frobnicate'",)"
            R"("kind":"response"})");
  CHECK(unknown["error_code"] == "protocol_error");
  CHECK(unknown["error_message"] == "unknown control-plane op: 'frobnicate'");
  auto missing = client->request("get_agent", json::object());
  CHECK(missing["ok"] == false);
  CHECK(missing["error_code"] == "error");
  CHECK(missing["error_message"] == "'name_or_id'");
  auto ghost = client->request("get_agent", {{"name_or_id", "ghost"}});
  CHECK(ghost["error_code"] == "not_found");
  CHECK(ghost["error_message"] == "agent not found: ghost");
  CHECK(log_length(serve) == before);
}

TEST_CASE(
    "a binary message is decoded as UTF-8 text, as AG2 does, invalid "
    "UTF-8 is skipped") {
  ServeFixture serve;
  auto client = serve.connect();
  client->send_binary(
      R"({"request_id": "b1", "op": "find_agent_id", "params": {"name": "x"}, "kind": "request"})");
  auto response = client->await_response("b1");
  CHECK(response["ok"] == true);
  CHECK(response["result"].is_null());
  CHECK(
      answers_to(*client, "{\"kind\": \"\xff\xfe\"}", /*binary=*/true).empty());
}

TEST_CASE(
    "a message over the frame limit closes that connection with 1009, "
    "the server keeps serving the others") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.connection.max_frame_bytes = 64 << 10;
  });
  auto other = serve.connect();
  const std::string alice = other->register_agent("alice");
  auto client = serve.connect();
  const auto before = log_length(serve);
  client->send({{"request_id", "big"},
                {"op", "find_agent_id"},
                {"params", {{"name", std::string(70 << 10, 'x')}}},
                {"kind", "request"}});
  REQUIRE(client->wait_closed(5s));
  CHECK(client->close_code() == 1009);
  CHECK(log_length(serve) == before);
  CHECK(other->call("get_agent", {{"name_or_id", alice}})["name"] == "alice");
}

// A client by hand on a raw socket: the opening handshake, with the
// client's first frames in the same write.
class RawClient {
 public:
  RawClient(std::uint16_t port, std::string_view first_frames) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    write(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n" +
        std::string(first_frames));
  }

  void write(std::string_view bytes) {
    boost::asio::write(socket_, boost::asio::buffer(bytes));
  }

  // The whole frames after the handshake's response, (first byte,
  // payload), once at least `count` have come or the server closed.
  std::vector<std::pair<unsigned char, std::string>> frames(
      std::size_t count = SIZE_MAX) {
    while (!closed_ && parsed().size() < count) {
      char buffer[4096];
      boost::system::error_code ec;
      const std::size_t n = socket_.read_some(boost::asio::buffer(buffer), ec);
      received_.append(buffer, n);
      closed_ = static_cast<bool>(ec);
    }
    return parsed();
  }

 private:
  std::vector<std::pair<unsigned char, std::string>> parsed() const {
    std::vector<std::pair<unsigned char, std::string>> out;
    std::size_t at = received_.find("\r\n\r\n");
    if (at == std::string::npos) return out;
    for (at += 4; at + 2 <= received_.size();) {
      std::size_t length = static_cast<unsigned char>(received_[at + 1]);
      std::size_t header = 2;
      if (length == 126) {
        if (at + 4 > received_.size()) break;
        length = static_cast<unsigned char>(received_[at + 2]) << 8 |
                 static_cast<unsigned char>(received_[at + 3]);
        header = 4;
      }
      REQUIRE(length < (1 << 16));
      if (at + header + length > received_.size()) break;
      out.emplace_back(static_cast<unsigned char>(received_[at]),
                       received_.substr(at + header, length));
      at += header + length;
    }
    return out;
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_{io_};
  std::string received_;
  bool closed_ = false;
};

std::uint16_t close_code_of(const std::string& payload) {
  REQUIRE(payload.size() >= 2);
  return static_cast<std::uint16_t>(static_cast<unsigned char>(payload[0])
                                        << 8 |
                                    static_cast<unsigned char>(payload[1]));
}

TEST_CASE(
    "a frame breaking the WebSocket protocol closes that connection with "
    "1002, text that is not UTF-8 with 1007, and the others are served") {
  using transport::ws::Opcode;
  ServeFixture serve;
  auto other = serve.connect();
  const std::string alice = other->register_agent("alice");
  const auto before = log_length(serve);
  const std::string request =
      R"({"request_id": "r1", "op": "find_agent_id", "params": {"name": "x"}, "kind": "request"})";
  struct Case {
    const char* what;
    std::string bytes;
    std::uint16_t code;
  };
  for (const Case& c : {
           Case{"unmasked",
                testing::client_frame(Opcode::kText, request, true, false),
                1002},
           Case{"reserved bits",
                testing::client_frame(Opcode::kText, request, true, true, 0x40),
                1002},
           Case{"continuation outside a message",
                testing::client_frame(Opcode::kContinuation, request), 1002},
           Case{"text not UTF-8",
                testing::client_frame(Opcode::kText, "{\"kind\": \"\xff\"}"),
                1007},
       }) {
    CAPTURE(c.what);
    RawClient client(serve.port(), c.bytes);
    const auto frames = client.frames();  // until the server closes
    REQUIRE(frames.size() == 1);
    CHECK(frames[0].first == 0x88);  // a close frame, FIN
    CHECK(close_code_of(frames[0].second) == c.code);
  }
  CHECK(log_length(serve) == before);
  CHECK(other->call("get_agent", {{"name_or_id", alice}})["name"] == "alice");
}

TEST_CASE(
    "frames sent with the opening handshake, fragmented and between pings, "
    "are read, and a client's close is answered with its code") {
  using testing::client_frame;
  using transport::ws::Opcode;
  ServeFixture serve;
  const std::string request =
      R"({"request_id": "r1", "op": "find_agent_id", "params": {"name": "x"}, "kind": "request"})";
  RawClient client(serve.port(),
                   client_frame(Opcode::kText, request.substr(0, 30),
                                /*fin=*/false) +
                       client_frame(Opcode::kPing, "p") +
                       client_frame(Opcode::kContinuation, request.substr(30)));
  auto frames = client.frames(2);
  REQUIRE(frames.size() == 2);
  CHECK(frames[0].first == 0x8A);  // the pong, FIN
  CHECK(frames[0].second == "p");
  CHECK(frames[1].first == 0x81);  // the response, a FIN text frame
  const json response = json::parse(frames[1].second);
  CHECK(response["request_id"] == "r1");
  CHECK(response["ok"] == true);
  client.write(
      client_frame(Opcode::kClose, std::string("\x03\xe8", 2) + "bye"));
  frames = client.frames();  // until the server closes
  REQUIRE(frames.size() == 3);
  CHECK(frames[2].first == 0x88);
  CHECK(frames[2].second == std::string("\x03\xe8", 2));
}

// alice, on `reader`, posts 25 MB of notifies to bob, on `sleeper`, which
// does not read meanwhile: more than the socket buffers hold. Then the
// sleeper reads again, and finds itself closed as a slow consumer, while
// the reader is still served.
void expect_sleeper_closed(WsTestClient& reader, WsTestClient& sleeper) {
  const std::string alice = reader.register_agent("alice");
  json no_inbox_cap = {{"limits", {{"inbox", {{"max_pending", 0}}}}}};
  const std::string bob = sleeper.register_agent("bob", nullptr, no_inbox_cap);
  const std::string channel =
      testing::open_channel(reader, alice, sleeper, bob);
  sleeper.pause_reading();
  const std::string big(256 << 10, 'x');
  for (int i = 0; i < 100; ++i) {
    auto response = reader.request("post_envelope",
                                   testing::text_envelope(channel, alice, big));
    REQUIRE_MESSAGE(response["ok"] == true, response.dump());
  }
  sleeper.resume_reading();
  REQUIRE(sleeper.wait_closed(15s));
  CHECK(sleeper.close_code() == 1008);
  CHECK(sleeper.close_reason() ==
        "send queue full: the client does not read fast enough");
  CHECK(reader.call("get_channel", {{"channel_id", channel}})["state"] ==
        "active");
}

TEST_CASE(
    "a client that stops reading is closed with a reason once its send "
    "queue is full, others keep being served") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.connection.max_frame_bytes = 512 << 10;
    config.connection.send_queue.max_bytes = 1 << 20;
    // A client that does not answer the close frame has its socket torn
    // down after the handshake timeout, unread frames and all. The sleeper
    // reads again only after the last post, which can be 45 s away under
    // ASan on a slow machine: its close frame must still be there then.
    config.connection.handshake_timeout = 5min;
  });
  auto reader = serve.connect();
  auto sleeper = serve.connect();
  expect_sleeper_closed(*reader, *sleeper);
}

TEST_CASE(
    "a client that stops reading is closed once the send queues of all "
    "connections hold total_send_queue_bytes, below its own queue's limit, "
    "while a client that keeps up is served") {
  ServeFixture serve([](transport::ServerConfig& config) {
    config.connection.max_frame_bytes = 512 << 10;
    // The 25 MB posted are far less than bob's own queue's limit, far more
    // than the total.
    config.connection.send_queue.max_bytes = 64 << 20;
    config.connection.max_total_send_queue_bytes = 2 << 20;
    config.connection.handshake_timeout = 5min;  // as in the test above
    config.admin = transport::HostPort{"127.0.0.1", 0};
  });
  auto reader = serve.connect();
  auto sleeper = serve.connect();
  expect_sleeper_closed(*reader, *sleeper);
  // What bob's queue held is given back to the total once his socket is
  // torn down.
  const std::uint16_t admin = *serve.server().admin_port();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  bool returned = false;
  while (!returned && std::chrono::steady_clock::now() < deadline) {
    returned =
        testing::http_get(admin, "/metrics")
            .body.find("\nparley_send_queue_bytes 0\n") != std::string::npos;
    if (!returned) std::this_thread::sleep_for(10ms);
  }
  CHECK(returned);
}

}  // namespace
}  // namespace parley
