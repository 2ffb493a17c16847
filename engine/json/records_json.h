// JSON codecs between AG2's record shapes (envelope, passport, resume, rule,
// channel metadata) and the engine's records. Only the op layer (and tools
// beside it) include this header; the engine proper never sees nlohmann::json.
//
// Writing. Every writer emits exactly AG2's keys (never Parley-only fields
// such as Envelope::sequence), with JsonText fields embedded as JSON values
// and a DurationSpec as an integer or a string. Two flavours differ only in
// key order:
//   * to_json() returns nlohmann::json, whose objects keep keys sorted (byte
//     order = code point order). That is the order of AG2's WAL and of
//     `json.dumps(..., sort_keys=True)`, so control-plane results and
//     `parley exec` output compare byte-for-byte with the golden scripts.
//   * to_ordered_json() returns nlohmann::ordered_json in AG2's declaration
//     order: the order of AG2's on-disk files (passport.json, rule.json,
//     metadata.json, ...) and of frame payloads. Free-form JsonText values
//     keep the key order of their text; `event_data` comes out sorted.
// Preconditions: every JsonText field holds valid JSON (they are validated
// where they enter the engine); an invalid one throws nlohmann's
// parse_error (a programmer error). Strings are valid UTF-8.
//
// Reading. Parsing is strict, like AG2's Python building a record from the
// JSON object's keys as constructor arguments: an unknown key, a missing
// required key or a value of the wrong JSON type fails the whole record with
// ErrorKind::kInvalid (wire code "error") and a message naming the object
// and the field, e.g. "envelope has unknown key 'foo'", "envelope is missing
// required key 'audience'", "envelope field 'depth' must be an integer",
// "rule.limits.inbox field 'max_pending' must be an integer". Nested
// objects are named by their path ("passport.auth", "resume.examples[0]").
// Absent optional keys take AG2's defaults (the record structs' defaults).
// Integers must be JSON integers within int64 (no booleans, no 4.0).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/base/envelope.h"
#include "engine/base/error.h"
#include "engine/channels/channel.h"
#include "engine/registry/identity.h"

namespace parley::engine {

// Sorted keys (see above).
nlohmann::json to_json(const Passport& passport);
nlohmann::json to_json(const Resume& resume);
nlohmann::json to_json(const Rule& rule);
nlohmann::json to_json(const ChannelManifest& manifest);
nlohmann::json to_json(const ChannelMetadata& metadata);
nlohmann::json to_json(const Envelope& envelope);
// Same as to_json(envelope).
nlohmann::json envelope_to_json(const Envelope& envelope);

// AG2's declaration order (see above).
nlohmann::ordered_json to_ordered_json(const Passport& passport);
nlohmann::ordered_json to_ordered_json(const Resume& resume);
nlohmann::ordered_json to_ordered_json(const Rule& rule);
nlohmann::ordered_json to_ordered_json(const ChannelManifest& manifest);
nlohmann::ordered_json to_ordered_json(const ChannelMetadata& metadata);
nlohmann::ordered_json to_ordered_json(const Envelope& envelope);

// Required: `name`. `kind` must be "agent", "human", "remote_agent" or null,
// else "Passport.kind must be one of ('agent', 'human', 'remote_agent') or
// None; got '<x>'". `auth` and `cost` are strict objects; `cost` is stored
// with all three of AG2's keys (input_per_mtok, output_per_mtok,
// latency_tier), missing ones null, as AG2's CostProfile would print it.
// `auth.claim` must be an object. Hub-stamped fields (agent_id, created_at)
// are accepted as given; the caller overwrites them.
Result<Passport> passport_from_json(const nlohmann::json& value);

// Nothing required; `examples[i].title` is required within an example.
Result<Resume> resume_from_json(const nlohmann::json& value);

// Nothing required at any level. Durations are an integer or a string
// (not parsed here; see engine/registry/duration.h).
Result<Rule> rule_from_json(const nlohmann::json& value);

// Required: `type`; within `participants`, `min`; within each expectation,
// `name` and `on_violation`. `knobs_schema` maps names to strings;
// `applies_to` is a list of strings or null.
Result<ChannelManifest> channel_manifest_from_json(const nlohmann::json& value);

// AG2's metadata.json (for importing AG2 stores). Required: channel_id,
// manifest, creator_id, participants, state, created_at; within each
// participant, agent_id, role and order. `state` and `role` must be one of
// AG2's enum values.
Result<ChannelMetadata> channel_metadata_from_json(const nlohmann::json& value);

// An envelope as a client posts it (or as AG2's WAL holds it). Required:
// channel_id, sender_id, audience (a list of strings or null), event_type,
// event_data (an object, stored as a FlexBuffer via to_flex). `priority`
// must be "background", "normal" or "urgent", else "priority must be one of
// ['background', 'normal', 'urgent'], got '<x>'". `sequence` is not an AG2
// key and is refused like any other unknown key. The result's sequence is 0.
Result<Envelope> envelope_from_json(const nlohmann::json& value);

// Compact JSON (no spaces); parse(dump_compact(v)) == v. Never throws: a
// string that is not UTF-8 (only a damaged record of a schema without
// checksums can hold one) has each bad byte written as U+FFFD.
std::string dump_compact(const nlohmann::json& value);

}  // namespace parley::engine
