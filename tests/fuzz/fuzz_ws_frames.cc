// fuzz_ws_frames: the bytes a client sends on a WebSocket after the
// handshake, through the server's frame reader (transport::ws::FrameReader,
// a 4 KiB message limit), the input's first byte giving the size of the
// reads they arrive in (1 to 256 bytes).
//
// Asserts: no message is over the limit; a close's code is one a peer may
// send, or 1005, and its reason UTF-8; a violation's code is
// 1002, 1007 or 1009, and nothing follows it; and the reader yields the
// same events whether the bytes arrive in those reads or all at once.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/input_limits.h"
#include "engine/transport/ws_frames.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

namespace ws = parley::transport::ws;

constexpr std::size_t kLimit = 4096;

struct Seen {
  ws::Event::Kind kind;
  std::string payload;
  std::uint16_t code;
  std::string reason;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> read_all(std::string_view bytes, std::size_t read_size) {
  ws::FrameReader reader(kLimit);
  std::vector<Seen> seen;
  bool violated = false;
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t n = std::min(read_size, bytes.size() - at);
    const auto room = reader.prepare(n);
    std::memcpy(room.data(), bytes.data() + at, n);
    reader.commit(n);
    at += n;
    while (auto event = reader.next()) {
      FUZZ_CHECK(!violated, "an event after a violation");
      seen.push_back({event->kind, std::string(event->payload), event->code,
                      event->reason});
      switch (event->kind) {
        case ws::Event::Kind::kMessage:
          FUZZ_CHECK(event->payload.size() <= kLimit,
                     "a message over the limit");
          break;
        case ws::Event::Kind::kClose:
          FUZZ_CHECK(event->code == ws::kCloseNoStatus ||
                         (event->code >= 1000 && event->code < 5000 &&
                          event->code != 1004 && event->code != 1005 &&
                          event->code != 1006 && event->code != 1015),
                     "a close code a peer may not send");
          FUZZ_CHECK(parley::engine::is_valid_utf8(event->reason),
                     "a close reason not UTF-8");
          break;
        case ws::Event::Kind::kViolation:
          FUZZ_CHECK(event->code == ws::kCloseProtocolError ||
                         event->code == ws::kCloseInvalidData ||
                         event->code == ws::kCloseMessageTooBig,
                     "a violation's code is " + std::to_string(event->code));
          violated = true;
          break;
        default:
          break;
      }
    }
  }
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  if (size == 0) return 0;
  const std::size_t read_size = std::size_t{data[0]} + 1;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  const std::vector<Seen> chunked = read_all(bytes, read_size);
  const std::vector<Seen> whole = read_all(bytes, bytes.size() + 1);
  FUZZ_CHECK(chunked == whole, "the events depend on how the bytes arrive (" +
                                   std::to_string(chunked.size()) +
                                   " in reads of " + std::to_string(read_size) +
                                   ", " + std::to_string(whole.size()) +
                                   " at once)");
  return 0;
}
