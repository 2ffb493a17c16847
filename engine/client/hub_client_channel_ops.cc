// HubClient's typed calls on channels and their envelopes.
#include <variant>

#include "engine/client/hub_client.h"
#include "engine/client/hub_client_calls.h"
#include "engine/json/records_json.h"

namespace parley::client {

using nlohmann::json;

namespace {

engine::Result<ChannelMetadata> metadata_from(const json& value) {
  return engine::channel_metadata_from_json(value);
}

engine::Result<Envelope> envelope_from(const json& value) {
  return engine::envelope_from_json(value);
}

engine::Result<engine::PendingTurn> pending_turn_from(const json& value) {
  const auto text_at = [&](const char* key) -> const json* {
    auto it = value.find(key);
    return it != value.end() && it->is_string() ? &*it : nullptr;
  };
  if (!value.is_object() || !text_at("channel_id") || !text_at("expected_at")) {
    return engine::invalid(
        "pending turn must have string fields "
        "'channel_id' and 'expected_at'");
  }
  engine::PendingTurn turn{
      .channel_id = value["channel_id"].get<std::string>(),
      .expected_at = value["expected_at"].get<std::string>()};
  if (const json* trigger = text_at("triggering_envelope_id")) {
    turn.triggering_envelope_id = trigger->get<std::string>();
  }
  return turn;
}

}  // namespace

void HubClient::create_channel(CreateChannelRequest request,
                               Handler<ChannelMetadata> done,
                               std::chrono::milliseconds timeout) {
  calls::start_built(
      impl_, "create_channel",
      [&] {
        json params = {{"creator_id", request.creator_id},
                       {"manifest_type", request.manifest_type},
                       {"manifest_version", request.manifest_version},
                       {"participants", request.participants}};
        if (request.required_acks) {
          params["required_acks"] = *request.required_acks;
        }
        if (request.ttl) {
          std::visit([&](const auto& ttl) { params["ttl"] = ttl; },
                     *request.ttl);
        }
        if (request.knobs) params["knobs"] = json::parse(*request.knobs);
        if (request.intent) params["intent"] = *request.intent;
        if (request.labels) params["labels"] = json::parse(*request.labels);
        return params;
      },
      calls::parsed<ChannelMetadata>(std::move(done), metadata_from), timeout);
}

void HubClient::get_channel(std::string channel_id,
                            Handler<ChannelMetadata> done) {
  calls::start(impl_, "get_channel", {{"channel_id", std::move(channel_id)}},
               calls::parsed<ChannelMetadata>(std::move(done), metadata_from));
}

void HubClient::list_channels(std::optional<std::string> agent_id,
                              Handler<std::vector<ChannelMetadata>> done,
                              std::int64_t limit) {
  json params{{"limit", limit}};
  if (agent_id) params["agent_id"] = std::move(*agent_id);
  calls::start(impl_, "list_channels", std::move(params),
               calls::parsed<std::vector<ChannelMetadata>>(
                   std::move(done), calls::list_of<ChannelMetadata>(
                                        "list_channels", metadata_from)));
}

void HubClient::close_channel(std::string channel_id, std::string reason,
                              Handler<ChannelMetadata> done) {
  calls::start(
      impl_, "close_channel",
      {{"channel_id", std::move(channel_id)}, {"reason", std::move(reason)}},
      calls::parsed<ChannelMetadata>(std::move(done), metadata_from));
}

void HubClient::post_envelope(Envelope envelope, Handler<std::string> done) {
  calls::start(impl_, "post_envelope",
               {{"envelope", engine::to_json(envelope)}},
               calls::parsed<std::string>(
                   std::move(done), calls::text<std::string>("post_envelope")));
}

void HubClient::read_wal(std::string channel_id,
                         Handler<std::vector<Envelope>> done,
                         std::int64_t since,
                         std::optional<std::int64_t> until) {
  json params{{"channel_id", std::move(channel_id)}};
  if (since != 0) params["since"] = since;
  if (until) params["until"] = *until;
  calls::start(impl_, "read_wal", std::move(params),
               calls::parsed<std::vector<Envelope>>(
                   std::move(done),
                   calls::list_of<Envelope>("read_wal", envelope_from)));
}

void HubClient::can_send(std::string channel_id, std::string sender_id,
                         Handler<bool> done,
                         std::optional<std::string> event_type) {
  json params{{"channel_id", std::move(channel_id)},
              {"sender_id", std::move(sender_id)}};
  if (event_type) params["event_type"] = std::move(*event_type);
  calls::start(
      impl_, "can_send", std::move(params),
      calls::parsed<bool>(
          std::move(done), [](const json& value) -> engine::Result<bool> {
            if (!value.is_boolean()) {
              return engine::invalid("can_send answered a non-bool");
            }
            return value.get<bool>();
          }));
}

void HubClient::find_envelope_by_causation(
    std::string channel_id, std::string sender_id, std::string causation_id,
    Handler<std::optional<Envelope>> done) {
  calls::start(
      impl_, "find_envelope_by_causation",
      {{"channel_id", std::move(channel_id)},
       {"sender_id", std::move(sender_id)},
       {"causation_id", std::move(causation_id)}},
      calls::parsed<std::optional<Envelope>>(
          std::move(done),
          [](const json& value) -> engine::Result<std::optional<Envelope>> {
            if (value.is_null()) return std::optional<Envelope>();
            auto envelope = engine::envelope_from_json(value);
            if (!envelope) return std::unexpected(envelope.error());
            return std::optional<Envelope>(std::move(*envelope));
          }));
}

void HubClient::pending_turns_for(
    std::string agent_id, Handler<std::vector<engine::PendingTurn>> done) {
  calls::start(
      impl_, "pending_turns_for", {{"agent_id", std::move(agent_id)}},
      calls::parsed<std::vector<engine::PendingTurn>>(
          std::move(done), calls::list_of<engine::PendingTurn>(
                               "pending_turns_for", pending_turn_from)));
}

void HubClient::report_turn_failure(std::string channel_id,
                                    std::string agent_id,
                                    std::string envelope_id, std::string error,
                                    Handler<void> done) {
  calls::start(impl_, "report_turn_failure",
               {{"channel_id", std::move(channel_id)},
                {"agent_id", std::move(agent_id)},
                {"envelope_id", std::move(envelope_id)},
                {"error", std::move(error)}},
               calls::ignored(std::move(done)));
}

}  // namespace parley::client
