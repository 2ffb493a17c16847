// Listener events (spec §12.3): what a mutation stages into its batch for
// the listeners, told by publish() once the batch is durable.
#include <nlohmann/json.hpp>

#include "engine/base/flex_json.h"
#include "engine/base/input_limits.h"
#include "engine/hub/hub.h"
#include "engine/hub/hub_commit.h"
#include "engine/json/records_json.h"
#include "engine/records/log_records.h"

namespace parley::engine {

void Hub::stage_agent_event(Commit& batch, std::string_view agent_id,
                            std::string_view kind,
                            nlohmann::json payload) const {
  if (listeners_.empty()) return;
  batch.notify([agent_id = std::string(agent_id), kind = std::string(kind),
                payload = std::move(payload)](HubListener& listener) {
    listener.on_agent_event(agent_id, kind, payload);
  });
}

void Hub::stage_channel_event(Commit& batch, std::string_view channel_id,
                              std::string_view kind,
                              nlohmann::json payload) const {
  if (listeners_.empty()) return;
  batch.notify([this, channel_id = std::string(channel_id),
                kind = std::string(kind),
                payload = std::move(payload)](HubListener& listener) mutable {
    if (!payload.contains("metadata")) {
      auto metadata = get_channel(channel_id);
      payload["metadata"] = metadata ? to_json(*metadata) : nullptr;
    }
    listener.on_channel_event(channel_id, kind, payload);
  });
}

void Hub::stage_envelope_posted(Commit& batch) const {
  if (listeners_.empty() || batch.envelopes.empty()) return;
  std::shared_ptr<const Envelope> envelope = batch.envelopes.back().envelope;
  batch.notify([this, envelope](HubListener& listener) {
    if (auto metadata = get_channel(envelope->channel_id)) {
      listener.on_envelope_posted(*envelope, *metadata);
    }
  });
}

Result<void> Hub::commit_and_publish(Commit& batch,
                                     std::unique_lock<std::mutex>& writer) {
  auto committed = commit(batch, writer);
  if (writer.owns_lock()) writer.unlock();
  if (committed) publish(batch);
  return committed;
}

Result<void> Hub::append_audit(std::string_view json_object) {
  if (auto checked = check_json_text("audit record", json_object); !checked) {
    return checked;
  }
  auto record =
      nlohmann::json::parse(json_object, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("at") ||
      !record["at"].is_string() || !record.contains("kind") ||
      !record["kind"].is_string()) {
    return invalid(
        "an audit record must be a JSON object with string 'at' and 'kind'");
  }
  if (auto encoded = to_flex(record); !encoded) {
    return std::unexpected(encoded.error());
  }
  auto writer = lock_writer();
  Commit batch;
  batch.add(audit_record(record));
  return commit_and_publish(batch, writer);
}

Result<std::string> Hub::post_envelope(Envelope envelope) {
  Result<std::string> posted;
  if (auto checked = check_envelope(envelope); !checked) {
    posted = std::unexpected(checked.error());
  } else {
    posted = accept_post(envelope);
  }
  if (!posted && posted.error().kind != ErrorKind::kStorage) {
    const Error& error = posted.error();
    tell([&](HubListener& listener) {
      listener.on_envelope_rejected(envelope, error);
    });
  }
  return posted;
}

}  // namespace parley::engine
