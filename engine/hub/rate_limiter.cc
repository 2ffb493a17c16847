#include "engine/hub/rate_limiter.h"

#include <algorithm>
#include <chrono>

namespace parley::engine {

Result<void> RateLimiter::check(const AgentRecord& sender, Timestamp now) {
  log::MutexLock lock(mutex_);
  const auto& limits = sender.rule.limits;
  if (limits.rate_per_minute <= 0) {
    if (!buckets_.empty()) buckets_.erase(sender.agent_id());
    return {};
  }
  const double capacity = static_cast<double>(std::max<std::int64_t>(
      1, limits.rate_burst > 0 ? limits.rate_burst : limits.rate_per_minute));
  auto [it, created] = buckets_.try_emplace(sender.agent_id());
  Bucket& bucket = it->second;
  if (created || bucket.per_minute != limits.rate_per_minute ||
      bucket.burst != limits.rate_burst) {
    bucket = {limits.rate_per_minute, limits.rate_burst, capacity, now};
  }
  if (now > bucket.refilled) {
    const double seconds =
        std::chrono::duration<double>(now - bucket.refilled).count();
    bucket.tokens = std::min(
        capacity,
        bucket.tokens +
            seconds * static_cast<double>(limits.rate_per_minute) / 60.0);
    bucket.refilled = now;
  }
  if (bucket.tokens < 1.0) {
    return access_denied(
        "sender '" + sender.passport.name + "' exceeded rate limit (" +
        std::to_string(limits.rate_per_minute) + "/min, burst " +
        std::to_string(limits.rate_burst) + ")");
  }
  return {};
}

void RateLimiter::consume(std::string_view sender_id) {
  log::MutexLock lock(mutex_);
  auto it = buckets_.find(sender_id);
  if (it != buckets_.end()) it->second.tokens -= 1.0;
}

void RateLimiter::refund(std::string_view sender_id) {
  log::MutexLock lock(mutex_);
  auto it = buckets_.find(sender_id);
  if (it != buckets_.end()) it->second.tokens += 1.0;
}

void RateLimiter::forget(std::string_view sender_id) {
  log::MutexLock lock(mutex_);
  buckets_.erase(std::string(sender_id));
}

}  // namespace parley::engine
