#include "engine/base/ids.h"

#include <array>
#include <chrono>
#include <cstring>
#include <random>

namespace parley::engine {

namespace {

std::uint64_t now_nanos() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count());
}

std::uint64_t random_bits() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine();
}

// Each byte's two lowercase hex digits: an id is written a byte at a time.
constexpr auto kHexPairs = [] {
  constexpr char kDigits[] = "0123456789abcdef";
  std::array<char, 512> pairs{};
  for (int byte = 0; byte < 256; ++byte) {
    pairs[2 * byte] = kDigits[byte >> 4];
    pairs[2 * byte + 1] = kDigits[byte & 0xf];
  }
  return pairs;
}();

void put_hex(std::uint64_t value, char* out) {
  for (int i = 7; i >= 0; --i) {
    std::memcpy(out + 2 * i, &kHexPairs[2 * (value & 0xff)], 2);
    value >>= 8;
  }
}

std::string format_id(std::uint64_t nanos) {
  std::string id(32, '0');
  put_hex(nanos, id.data());
  put_hex(random_bits(), id.data() + 16);
  return id;
}

}  // namespace

bool has_id_shape(std::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string new_id() { return format_id(now_nanos()); }

void EnvelopeIdMinter::observe(std::string_view id) {
  if (!has_id_shape(id)) return;
  std::uint64_t nanos = 0;
  for (char c : id.substr(0, 16)) {
    nanos = nanos * 16 +
            static_cast<std::uint64_t>(c <= '9' ? c - '0' : c - 'a' + 10);
  }
  std::uint64_t last = last_nanos_.load(std::memory_order_relaxed);
  while (nanos > last && !last_nanos_.compare_exchange_weak(
                             last, nanos, std::memory_order_relaxed)) {
  }
}

std::string EnvelopeIdMinter::mint() {
  const std::uint64_t now = now_nanos();
  std::uint64_t last = last_nanos_.load(std::memory_order_relaxed);
  std::uint64_t nanos = 0;
  do {
    nanos = now > last ? now : last + 1;
  } while (!last_nanos_.compare_exchange_weak(last, nanos,
                                              std::memory_order_relaxed));
  return format_id(nanos);
}

}  // namespace parley::engine
