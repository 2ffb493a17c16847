#include "engine/transport/ws_frames.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>

namespace parley::transport::ws {
namespace {

bool is_control(std::uint8_t opcode) { return opcode >= 0x8; }

bool known_opcode(std::uint8_t opcode) {
  return opcode <= 0x2 || (opcode >= 0x8 && opcode <= 0xA);
}

// Codes a peer may send in a close frame (RFC 6455 §7.4: the defined ones
// other than those reserved for local use, then the registered and private
// ranges).
bool sendable_close_code(std::uint16_t code) {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
         (code >= 3000 && code <= 4999);
}

bool valid_utf8(std::string_view text) {
  return simdjson::validate_utf8(text.data(), text.size());
}

}  // namespace

void apply_mask(std::span<char> payload, std::span<const char, 4> key) {
  // 8 bytes at a time: the key twice over, in the payload's byte order.
  std::uint32_t key32;
  std::memcpy(&key32, key.data(), 4);
  const std::uint64_t key64 = std::uint64_t{key32} << 32 | key32;
  std::size_t i = 0;
  for (; i + 8 <= payload.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, payload.data() + i, 8);
    word ^= key64;
    std::memcpy(payload.data() + i, &word, 8);
  }
  for (; i < payload.size(); ++i) payload[i] ^= key[i & 3];
}

std::size_t server_header(Opcode opcode, std::uint64_t payload_size,
                          std::span<char, kMaxServerHeader> out) {
  out[0] = static_cast<char>(0x80 | static_cast<std::uint8_t>(opcode));
  if (payload_size < 126) {
    out[1] = static_cast<char>(payload_size);
    return 2;
  }
  if (payload_size <= 0xffff) {
    out[1] = 126;
    out[2] = static_cast<char>(payload_size >> 8);
    out[3] = static_cast<char>(payload_size);
    return 4;
  }
  out[1] = 127;
  for (int i = 0; i < 8; ++i) {
    out[2 + i] = static_cast<char>(payload_size >> (56 - 8 * i));
  }
  return 10;
}

std::string server_frame(Opcode opcode, std::string_view payload) {
  char header[kMaxServerHeader];
  const std::size_t size = server_header(opcode, payload.size(), header);
  std::string frame(header, size);
  frame.append(payload);
  return frame;
}

std::string close_payload(std::uint16_t code, std::string_view reason) {
  constexpr std::size_t kMaxReason = 123;  // 125 bytes of control payload
  if (reason.size() > kMaxReason) {
    std::size_t cut = kMaxReason;
    while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80)
      --cut;
    reason = reason.substr(0, cut);
  }
  std::string payload;
  payload.push_back(static_cast<char>(code >> 8));
  payload.push_back(static_cast<char>(code));
  payload.append(reason);
  return payload;
}

std::span<char> FrameReader::prepare(std::size_t at_least) {
  if (begin_ == end_) begin_ = end_ = 0;
  if (buffer_.size() - end_ < at_least) {
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (buffer_.size() - end_ < at_least) {
      buffer_.resize(std::max(buffer_.size() * 2, end_ + at_least));
    }
  }
  return {buffer_.data() + end_, buffer_.size() - end_};
}

std::optional<Event> FrameReader::violation(std::uint16_t code,
                                            std::string reason) {
  spent_ = true;
  return Event{.kind = Event::Kind::kViolation,
               .payload = {},
               .code = code,
               .reason = std::move(reason)};
}

std::optional<Event> FrameReader::next() {
  while (!spent_) {
    const std::size_t available = end_ - begin_;
    if (available < 2) return std::nullopt;
    const auto* bytes =
        reinterpret_cast<const unsigned char*>(buffer_.data() + begin_);
    const bool fin = bytes[0] & 0x80;
    const std::uint8_t opcode = bytes[0] & 0x0F;
    if (bytes[0] & 0x70) {
      return violation(kCloseProtocolError, "reserved bits set in a frame");
    }
    if (!known_opcode(opcode)) {
      return violation(kCloseProtocolError,
                       "unknown opcode " + std::to_string(opcode));
    }
    if (!(bytes[1] & 0x80)) {
      return violation(kCloseProtocolError, "an unmasked client frame");
    }
    std::uint64_t length = bytes[1] & 0x7F;
    std::size_t header = 2;
    if (length == 126 || length == 127) {
      const std::size_t digits = length == 126 ? 2 : 8;
      if (available < 2 + digits) return std::nullopt;
      length = 0;
      for (std::size_t i = 0; i < digits; ++i) {
        length = length << 8 | bytes[2 + i];
      }
      header += digits;
    }
    if (is_control(opcode) && (!fin || length > 125)) {
      return violation(kCloseProtocolError,
                       "a fragmented or oversized control frame");
    }
    if (!is_control(opcode)) {
      const std::size_t so_far = in_message_ ? message_.size() : 0;
      if (length > max_message_bytes_ - std::min(so_far, max_message_bytes_)) {
        return violation(kCloseMessageTooBig,
                         "a message exceeded " +
                             std::to_string(max_message_bytes_) + " bytes");
      }
    }
    header += 4;  // the masking key
    if (available < header + length) {
      // Room for the whole frame, so that the next read can complete it.
      prepare(header + static_cast<std::size_t>(length) - available);
      return std::nullopt;
    }
    char* payload_at = buffer_.data() + begin_ + header;
    const auto size = static_cast<std::size_t>(length);
    apply_mask({payload_at, size}, std::span<const char, 4>(payload_at - 4, 4));
    const std::string_view payload(payload_at, size);
    begin_ += header + size;

    switch (static_cast<Opcode>(opcode)) {
      case Opcode::kPing:
        return Event{.kind = Event::Kind::kPing, .payload = payload};
      case Opcode::kPong:
        return Event{.kind = Event::Kind::kPong, .payload = payload};
      case Opcode::kClose: {
        if (payload.empty()) {
          return Event{.kind = Event::Kind::kClose, .code = kCloseNoStatus};
        }
        if (payload.size() < 2) {
          return violation(kCloseProtocolError, "a one-byte close payload");
        }
        const auto code = static_cast<std::uint16_t>(
            static_cast<unsigned char>(payload[0]) << 8 |
            static_cast<unsigned char>(payload[1]));
        if (!sendable_close_code(code)) {
          return violation(kCloseProtocolError,
                           "close code " + std::to_string(code));
        }
        const std::string_view reason = payload.substr(2);
        if (!valid_utf8(reason)) {
          return violation(kCloseInvalidData, "a close reason not UTF-8");
        }
        return Event{.kind = Event::Kind::kClose,
                     .code = code,
                     .reason = std::string(reason)};
      }
      case Opcode::kText:
      case Opcode::kBinary:
        if (in_message_) {
          return violation(kCloseProtocolError,
                           "a new message inside a fragmented one");
        }
        if (!fin) {
          in_message_ = true;
          message_is_text_ = opcode == 0x1;
          message_.assign(payload);
          continue;
        }
        if (opcode == 0x1 && !valid_utf8(payload)) {
          return violation(kCloseInvalidData, "a text message not UTF-8");
        }
        return Event{.kind = Event::Kind::kMessage, .payload = payload};
      case Opcode::kContinuation:
        if (!in_message_) {
          return violation(kCloseProtocolError,
                           "a continuation frame outside a message");
        }
        message_.append(payload);
        if (!fin) continue;
        in_message_ = false;
        if (message_is_text_ && !valid_utf8(message_)) {
          return violation(kCloseInvalidData, "a text message not UTF-8");
        }
        return Event{.kind = Event::Kind::kMessage, .payload = message_};
    }
  }
  return std::nullopt;
}

}  // namespace parley::transport::ws
