// WebSocket framing (RFC 6455 §5) on the server's side of a connection,
// below the session: the frames a server writes (unmasked, never
// fragmented) and an incremental reader of a client's frames (masked),
// which reassembles fragmented messages, checks text as UTF-8 and names
// the first violation of the protocol with the close code the RFC gives
// it. The session frames its own messages so that one socket write carries
// every frame queued meanwhile and one read serves every frame that has
// arrived; Beast only performs the opening handshake.
//
// Not thread-safe: a reader belongs to one session's strand.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace parley::transport::ws {

enum class Opcode : std::uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

// Close codes of RFC 6455 §7.4.1 the reader names.
inline constexpr std::uint16_t kCloseProtocolError = 1002;
inline constexpr std::uint16_t kCloseNoStatus = 1005;  // never sent
inline constexpr std::uint16_t kCloseInvalidData = 1007;
inline constexpr std::uint16_t kCloseMessageTooBig = 1009;

// The largest header a server frame has (2 bytes, then an 8-byte length).
inline constexpr std::size_t kMaxServerHeader = 10;

// Writes the header of an unmasked FIN frame of `opcode` carrying
// `payload_size` bytes into `out`; returns its length.
std::size_t server_header(Opcode opcode, std::uint64_t payload_size,
                          std::span<char, kMaxServerHeader> out);

// A whole unmasked FIN frame (control frames: at most 125 payload bytes).
std::string server_frame(Opcode opcode, std::string_view payload);

// A close frame's payload: `code` big-endian, then `reason` cut to the 123
// bytes that fit (at a UTF-8 character boundary).
std::string close_payload(std::uint16_t code, std::string_view reason);

// Masks `payload` in place with the 4-byte masking `key` as it appears on
// the wire, or unmasks it: the same XOR (RFC 6455 §5.3).
void apply_mask(std::span<char> payload, std::span<const char, 4> key);

// One thing the client sent.
struct Event {
  enum class Kind {
    kMessage,  // a whole text or binary message (`payload`)
    kPing,     // `payload`: what the pong must carry
    kPong,
    kClose,      // the client's close: `code` (kCloseNoStatus when it
                 // gave none) and `reason`
    kViolation,  // the client broke the protocol: close with `code` and
                 // `reason`; the reader yields nothing more
  };
  Kind kind;
  // kMessage, kPing, kPong: valid until the reader is called again.
  std::string_view payload;
  std::uint16_t code = 0;
  std::string reason;
};

class FrameReader {
 public:
  // Messages (all fragments together) above `max_message_bytes` are a
  // violation (1009), found from the length a frame declares, before its
  // payload arrives.
  explicit FrameReader(std::size_t max_message_bytes)
      : max_message_bytes_(max_message_bytes) {}

  // Room for at least `at_least` more bytes; write what arrived into it,
  // then commit() that many.
  std::span<char> prepare(std::size_t at_least = 16 * 1024);
  void commit(std::size_t bytes) { end_ += bytes; }

  // The next event of the bytes committed so far; nullopt when more bytes
  // are needed (or after a violation).
  std::optional<Event> next();

 private:
  std::optional<Event> violation(std::uint16_t code, std::string reason);

  const std::size_t max_message_bytes_;
  std::vector<char> buffer_ = std::vector<char>(16 * 1024);
  std::size_t begin_ = 0;  // the first byte not yet consumed
  std::size_t end_ = 0;    // one past the last byte committed
  std::string message_;    // the fragments of a message so far
  bool in_message_ = false;
  bool message_is_text_ = false;
  bool spent_ = false;  // after a violation
};

}  // namespace parley::transport::ws
