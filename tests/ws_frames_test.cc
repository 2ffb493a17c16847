// The server's WebSocket framing (engine/transport/ws_frames.h): the
// frames it writes, and its reader of a client's frames with every
// violation RFC 6455 names.
#include "engine/transport/ws_frames.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/ws_client_frame.h"

namespace parley {
namespace {

using testing::client_frame;
using transport::ws::Event;
using transport::ws::FrameReader;
using transport::ws::Opcode;
namespace ws = transport::ws;

void feed(FrameReader& reader, std::string_view bytes) {
  const auto room = reader.prepare(bytes.size());
  std::memcpy(room.data(), bytes.data(), bytes.size());
  reader.commit(bytes.size());
}

// Every event `bytes` yields, messages and payloads copied.
struct Seen {
  Event::Kind kind;
  std::string payload;
  std::uint16_t code;
};
std::vector<Seen> events(FrameReader& reader, std::string_view bytes) {
  feed(reader, bytes);
  std::vector<Seen> seen;
  while (auto event = reader.next()) {
    seen.push_back({event->kind, std::string(event->payload), event->code});
  }
  return seen;
}

Seen only_event(std::string_view bytes, std::size_t max = 1 << 20) {
  FrameReader reader(max);
  auto seen = events(reader, bytes);
  REQUIRE(seen.size() == 1);
  return seen.front();
}

TEST_CASE("a server frame's header takes 2, 4 or 10 bytes by its length") {
  char header[ws::kMaxServerHeader];
  CHECK(ws::server_header(Opcode::kText, 125, header) == 2);
  CHECK(header[0] == '\x81');
  CHECK(header[1] == 125);
  CHECK(ws::server_header(Opcode::kText, 126, header) == 4);
  CHECK(header[1] == 126);
  CHECK(ws::server_header(Opcode::kText, 65535, header) == 4);
  CHECK(static_cast<unsigned char>(header[2]) == 0xff);
  CHECK(ws::server_header(Opcode::kText, 65536, header) == 10);
  CHECK(header[1] == 127);
  CHECK(header[7] == 1);  // 65536 = 0x00..010000
  CHECK(ws::server_frame(Opcode::kPing, "") == std::string("\x89\x00", 2));
}

TEST_CASE(
    "a close payload carries the code and the reason cut at 123 bytes "
    "on a character boundary") {
  CHECK(ws::close_payload(1011, "keepalive ping timeout") ==
        std::string("\x03\xf3", 2) + "keepalive ping timeout");
  // 61 two-byte characters and one more: 124 bytes; the cut keeps 122.
  std::string reason;
  for (int i = 0; i < 62; ++i) reason += "\xc3\xa9";
  const std::string payload = ws::close_payload(1000, reason);
  CHECK(payload.size() == 2 + 122);
  CHECK(payload.substr(2) == reason.substr(0, 122));
}

TEST_CASE("a frame arriving byte by byte yields its message once whole") {
  const std::string frame = client_frame(Opcode::kText, "{\"kind\": \"ping\"}");
  FrameReader reader(1 << 20);
  for (std::size_t i = 0; i + 1 < frame.size(); ++i) {
    CHECK(events(reader, frame.substr(i, 1)).empty());
  }
  const auto seen = events(reader, frame.substr(frame.size() - 1));
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].kind == Event::Kind::kMessage);
  CHECK(seen[0].payload == "{\"kind\": \"ping\"}");
}

TEST_CASE(
    "several frames in one read yield their events in order, 16- and "
    "64-bit lengths included") {
  const std::string medium(300, 'm');
  const std::string large(70000, 'l');
  FrameReader reader(1 << 20);
  const auto seen = events(reader, client_frame(Opcode::kText, "a") +
                                       client_frame(Opcode::kPing, "p") +
                                       client_frame(Opcode::kBinary, medium) +
                                       client_frame(Opcode::kText, large) +
                                       client_frame(Opcode::kPong, ""));
  REQUIRE(seen.size() == 5);
  CHECK(seen[0].payload == "a");
  CHECK(seen[1].kind == Event::Kind::kPing);
  CHECK(seen[1].payload == "p");
  CHECK(seen[2].payload == medium);
  CHECK(seen[3].payload == large);
  CHECK(seen[4].kind == Event::Kind::kPong);
}

TEST_CASE(
    "a fragmented message is reassembled, with a ping between its "
    "fragments") {
  FrameReader reader(1 << 20);
  const auto seen =
      events(reader, client_frame(Opcode::kText, "{\"a\": ", false) +
                         client_frame(Opcode::kPing, "") +
                         client_frame(Opcode::kContinuation, "1", false) +
                         client_frame(Opcode::kContinuation, "}"));
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].kind == Event::Kind::kPing);
  CHECK(seen[1].kind == Event::Kind::kMessage);
  CHECK(seen[1].payload == "{\"a\": 1}");
}

TEST_CASE("a client's close yields its code and reason, or 1005 when empty") {
  const Seen empty = only_event(client_frame(Opcode::kClose, ""));
  CHECK(empty.kind == Event::Kind::kClose);
  CHECK(empty.code == ws::kCloseNoStatus);
  FrameReader reader(1 << 20);
  feed(reader,
       client_frame(Opcode::kClose, std::string("\x03\xe8", 2) + "bye"));
  const auto close = reader.next();
  REQUIRE(close.has_value());
  CHECK(close->kind == Event::Kind::kClose);
  CHECK(close->code == 1000);
  CHECK(close->reason == "bye");
}

TEST_CASE(
    "protocol violations name RFC 6455's close code, and the reader "
    "yields nothing after one") {
  struct Case {
    const char* what;
    std::string bytes;
    std::uint16_t code;
  };
  const std::vector<Case> cases = {
      {"unmasked", client_frame(Opcode::kText, "x", true, false), 1002},
      {"reserved bits", client_frame(Opcode::kText, "x", true, true, 0x40),
       1002},
      {"unknown opcode", client_frame(static_cast<Opcode>(0x3), "x"), 1002},
      {"fragmented ping", client_frame(Opcode::kPing, "", false), 1002},
      {"ping over 125 bytes",
       client_frame(Opcode::kPing, std::string(126, 'p')), 1002},
      {"continuation outside a message",
       client_frame(Opcode::kContinuation, "x"), 1002},
      {"message inside a message",
       client_frame(Opcode::kText, "a", false) +
           client_frame(Opcode::kText, "b"),
       1002},
      {"text not UTF-8", client_frame(Opcode::kText, "\xff\xfe"), 1007},
      {"fragmented text not UTF-8",
       client_frame(Opcode::kText, "\xc3", false) +
           client_frame(Opcode::kContinuation, "("),
       1007},
      {"one-byte close", client_frame(Opcode::kClose, "\x03"), 1002},
      {"close code 1005", client_frame(Opcode::kClose, "\x03\xed"), 1002},
      {"close reason not UTF-8", client_frame(Opcode::kClose, "\x03\xe8\xff"),
       1007},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    FrameReader reader(1 << 20);
    const auto seen =
        events(reader, c.bytes + client_frame(Opcode::kText, "after"));
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].kind == Event::Kind::kViolation);
    CHECK(seen[0].code == c.code);
  }
}

TEST_CASE("binary messages are not checked as UTF-8") {
  const Seen seen = only_event(client_frame(Opcode::kBinary, "\xff\xfe"));
  CHECK(seen.kind == Event::Kind::kMessage);
  CHECK(seen.payload == "\xff\xfe");
}

TEST_CASE(
    "a message over the limit is refused with 1009 from its declared "
    "length, before its payload arrives, fragments summed") {
  const std::string frame = client_frame(Opcode::kText, std::string(101, 'x'));
  FrameReader reader(100);
  const auto seen = events(reader, frame.substr(0, 8));  // header and key
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].kind == Event::Kind::kViolation);
  CHECK(seen[0].code == ws::kCloseMessageTooBig);

  CHECK(only_event(client_frame(Opcode::kText, std::string(100, 'x')), 100)
            .kind == Event::Kind::kMessage);
  const Seen summed =
      only_event(client_frame(Opcode::kText, std::string(60, 'x'), false) +
                     client_frame(Opcode::kContinuation, std::string(41, 'x')),
                 100);
  CHECK(summed.kind == Event::Kind::kViolation);
  CHECK(summed.code == ws::kCloseMessageTooBig);
}

}  // namespace
}  // namespace parley
