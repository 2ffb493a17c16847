// A WebSocket frame as a client writes it (RFC 6455 §5.2), for tests and
// fuzz seeds of the server's frame reader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/transport/ws_frames.h"

namespace parley::testing {

// Masked with a fixed key unless `masked` is false; `rsv` is or-ed into the
// first byte.
inline std::string client_frame(transport::ws::Opcode opcode,
                                std::string_view payload, bool fin = true,
                                bool masked = true, std::uint8_t rsv = 0) {
  std::string frame;
  frame.push_back(static_cast<char>((fin ? 0x80 : 0) | rsv |
                                    static_cast<std::uint8_t>(opcode)));
  const std::uint8_t mask_bit = masked ? 0x80 : 0;
  if (payload.size() < 126) {
    frame.push_back(static_cast<char>(mask_bit | payload.size()));
  } else if (payload.size() <= 0xffff) {
    frame.push_back(static_cast<char>(mask_bit | 126));
    frame.push_back(static_cast<char>(payload.size() >> 8));
    frame.push_back(static_cast<char>(payload.size()));
  } else {
    frame.push_back(static_cast<char>(mask_bit | 127));
    for (int shift = 56; shift >= 0; shift -= 8) {
      frame.push_back(static_cast<char>(payload.size() >> shift));
    }
  }
  const char key[4] = {'\x12', '\x34', '\x56', '\x78'};
  if (masked) frame.append(key, 4);
  const std::size_t begin = frame.size();
  frame.append(payload);
  if (masked) {
    transport::ws::apply_mask({frame.data() + begin, payload.size()}, key);
  }
  return frame;
}

}  // namespace parley::testing
