// Idempotent posts (engine/base/idempotency.h): finding the original of a
// retried post, in the log's idempotency index or among posts whose batch
// is sequenced but not yet durable.
#include "engine/base/idempotency.h"
#include "engine/hub/hub.h"
#include "engine/hub/hub_commit.h"
#include "engine/records/log_records.h"

namespace parley::engine {

Result<std::optional<std::string>> Hub::idempotent_original(
    std::string_view key, const Envelope& retry) const {
  std::optional<Envelope> original;
  {
    std::lock_guard lock(idempotency_mutex_);
    if (auto it = idempotency_in_flight_.find(key);
        it != idempotency_in_flight_.end()) {
      original = *it->second;
    }
  }
  if (!original) {
    auto sequence = store_->find_idempotency_key(key);
    if (!sequence) {
      return storage_error(sequence.error());
    }
    if (!*sequence) return std::optional<std::string>{};
    auto read = store_->read(**sequence, **sequence,
                             [&](std::uint64_t, std::string_view record) {
                               original = decode_envelope(record);
                               return false;
                             });
    if (!read) {
      return storage_error(read.error());
    }
    if (!original) {
      return fail(ErrorKind::kStorage,
                  "corruption: the idempotency index points at log record " +
                      std::to_string(**sequence) + ", which is no envelope");
    }
  }
  if (!same_post_payload(*original, retry)) {
    return fail(ErrorKind::kConflict,
                "idempotency key '" + *retry.idempotency_key +
                    "' was already used by sender '" + retry.sender_id +
                    "' in channel '" + retry.channel_id +
                    "' with another payload (envelope " +
                    original->envelope_id + ")");
  }
  return std::optional<std::string>(original->envelope_id);
}

void Hub::stage_idempotency_key(Commit& batch, std::string key) {
  const Commit::StagedEnvelope& staged = batch.envelopes.front();
  batch.entries[staged.entry].idempotency_key = key;
  std::lock_guard lock(idempotency_mutex_);
  idempotency_in_flight_.insert_or_assign(std::move(key), staged.envelope);
}

void Hub::forget_in_flight(const Commit& batch) {
  const std::string& key =
      batch.entries[batch.envelopes.front().entry].idempotency_key;
  if (key.empty()) return;  // most posts: no key, no lock
  std::lock_guard lock(idempotency_mutex_);
  if (auto it = idempotency_in_flight_.find(key);
      it != idempotency_in_flight_.end()) {
    idempotency_in_flight_.erase(it);
  }
}

}  // namespace parley::engine
