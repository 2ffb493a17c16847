// Channel metadata payloads (engine/records/payloads.h).
#include "engine/records/payload_fields.h"
#include "engine/records/payloads.h"

namespace parley::engine {

Result<FlexBytes> encode_channel_metadata(const ChannelMetadata& metadata) {
  return write_payload([&](PayloadWriter& out) {
    out.text("channel_id", metadata.channel_id);
    const ChannelManifest& manifest = metadata.manifest;
    out.object("manifest", [&] {
      out.text("type", manifest.type);
      out.integer("version", manifest.version);
      out.object("participants", [&] {
        out.integer("min", manifest.participants.min);
        out.integer("max", manifest.participants.max);
        out.text_list("roles", manifest.participants.roles);
      });
      out.object("knobs_schema", [&] {
        for (const auto& [name, hint] : manifest.knobs_schema) {
          out.text(name.c_str(), hint);
        }
      });
      out.text("default_view_policy", manifest.default_view_policy);
      out.each("expectations", manifest.expectations,
               [&](const ExpectationSpec& spec) {
                 out.text("name", spec.name);
                 out.text("on_violation", spec.on_violation);
                 out.json("params", spec.params);
                 out.json("applies_to", spec.applies_to);
               });
    });
    out.text("creator_id", metadata.creator_id);
    out.each("participants", metadata.participants,
             [&](const Participant& participant) {
               out.text("agent_id", participant.agent_id);
               out.text("role", participant.role);
               out.integer("order", participant.order);
               out.text("joined_at", participant.joined_at);
             });
    out.text("state", to_string(metadata.state));
    out.text("created_at", metadata.created_at);
    out.text("expires_at", metadata.expires_at);
    out.text("closed_at", metadata.closed_at);
    out.text("close_reason", metadata.close_reason);
    out.text("parent_channel_id", metadata.parent_channel_id);
    out.json("knobs", metadata.knobs);
    out.json("labels", metadata.labels);
    out.integer("required_acks", metadata.required_acks);
    out.text_list("pending_acks", metadata.pending_acks);
    out.text_list("rejected_by", metadata.rejected_by);
  });
}

namespace {

void read_manifest(PayloadReader in, ChannelManifest& manifest) {
  in.text("type", manifest.type, Presence::kRequired);
  in.integer("version", manifest.version);
  PayloadReader participants = in.object("participants");
  participants.integer("min", manifest.participants.min, Presence::kRequired);
  participants.integer("max", manifest.participants.max);
  participants.text_list("roles", manifest.participants.roles);
  in.each_entry(
      "knobs_schema", [&](std::string_view name, flexbuffers::Reference hint) {
        if (!hint.IsString()) {
          return in.wrong_type("knobs_schema." + std::string(name), "a string");
        }
        const auto text = hint.AsString();
        manifest.knobs_schema.emplace_back(
            name, std::string(text.c_str(), text.size()));
      });
  in.text("default_view_policy", manifest.default_view_policy);
  in.each("expectations", [&](PayloadReader item) {
    ExpectationSpec& spec = manifest.expectations.emplace_back();
    item.text("name", spec.name, Presence::kRequired);
    item.text("on_violation", spec.on_violation, Presence::kRequired);
    item.json("params", spec.params);
    item.json("applies_to", spec.applies_to);
  });
}

}  // namespace

Result<ChannelMetadata> decode_channel_metadata(
    std::span<const std::uint8_t> payload) {
  return read_payload<ChannelMetadata>(
      payload_root(payload), "channel",
      [](PayloadReader& in, ChannelMetadata& metadata) {
        in.text("channel_id", metadata.channel_id, Presence::kRequired);
        read_manifest(in.object("manifest", Presence::kRequired),
                      metadata.manifest);
        in.text("creator_id", metadata.creator_id, Presence::kRequired);
        in.each(
            "participants",
            [&](PayloadReader item) {
              Participant& participant = metadata.participants.emplace_back();
              item.text("agent_id", participant.agent_id, Presence::kRequired);
              item.text("role", participant.role, Presence::kRequired);
              item.integer("order", participant.order, Presence::kRequired);
              item.text("joined_at", participant.joined_at);
            },
            Presence::kRequired);
        std::string state;
        in.text("state", state, Presence::kRequired);
        if (auto parsed = channel_state_from(state)) {
          metadata.state = *parsed;
        } else {
          in.wrong_type("state", "a ChannelState");
        }
        in.text("created_at", metadata.created_at, Presence::kRequired);
        in.text("expires_at", metadata.expires_at);
        in.text("closed_at", metadata.closed_at);
        in.text("close_reason", metadata.close_reason);
        in.text("parent_channel_id", metadata.parent_channel_id);
        in.json("knobs", metadata.knobs);
        in.json("labels", metadata.labels);
        in.integer("required_acks", metadata.required_acks);
        in.text_list("pending_acks", metadata.pending_acks);
        in.text_list("rejected_by", metadata.rejected_by);
      });
}

}  // namespace parley::engine
