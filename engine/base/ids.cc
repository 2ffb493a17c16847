#include "engine/base/ids.h"

#include <chrono>
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

void put_hex(std::uint64_t value, char* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i) {
    out[i] = kDigits[value & 0xf];
    value >>= 4;
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
  std::lock_guard lock(mutex_);
  if (nanos > last_nanos_) last_nanos_ = nanos;
}

std::string EnvelopeIdMinter::mint() {
  std::uint64_t nanos = now_nanos();
  {
    std::lock_guard lock(mutex_);
    if (nanos <= last_nanos_) nanos = last_nanos_ + 1;
    last_nanos_ = nanos;
  }
  return format_id(nanos);
}

}  // namespace parley::engine
