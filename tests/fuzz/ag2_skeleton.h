// The AG2 layout fuzz_ag2_import puts one fuzzed file into: per file kind,
// the other files that kind needs to be read (an agent's passport for its
// other files, a channel's metadata for its WAL), taken from
// tests/golden/ag2-store-smoke (alice, bob and their conversation).
#pragma once

#include <array>
#include <string_view>
#include <utility>

namespace parley::fuzz {

// One AG2 file kind: where the fuzzed bytes go, and the files around it.
struct Ag2FileKind {
  std::string_view name;  // for messages: "passport", "wal", ...
  std::string_view path;  // relative to the layout's root
  // (path, contents) written before the fuzzed file; a kind that reads no
  // other file still gets its top-level directory.
  std::array<std::pair<std::string_view, std::string_view>, 3> around;
};

inline constexpr std::string_view kBobPassport =
    R"({"name": "bob", "owner": "", "provider": null, "model": null, "cost": null, "region": null, "auth": {"scheme": "none", "issuer": null, "audience": null, "key_fingerprint": null, "claim": {}}, "kind": "human", "hub_id": null, "version": 1, "agent_id": "18ea415ef6bf60ef829f7f6b08b41809", "created_at": "2026-11-22T03:47:57.583042+00:00"})";
inline constexpr std::string_view kAlicePassport =
    R"({"name": "alice", "owner": "", "provider": null, "model": null, "cost": null, "region": null, "auth": {"scheme": "none", "issuer": null, "audience": null, "key_fingerprint": null, "claim": {}}, "kind": "human", "hub_id": null, "version": 1, "agent_id": "18ea415ef6a36d322e5068cfe782b291", "created_at": "2026-11-22T03:47:57.581208+00:00"})";
inline constexpr std::string_view kChannelMetadata =
    R"({"channel_id": "18ea415ef6ef293d5bec87eabe61ccca", "manifest": {"type": "conversation", "version": 1, "participants": {"min": 2, "max": 2, "roles": ["initiator", "respondent"]}, "knobs_schema": {}, "default_view_policy": "windowed_summary", "expectations": [{"name": "max_silence", "on_violation": "audit", "params": {"seconds": 3600}, "applies_to": null}]}, "creator_id": "18ea415ef6a36d322e5068cfe782b291", "participants": [{"agent_id": "18ea415ef6a36d322e5068cfe782b291", "role": "initiator", "order": 0, "joined_at": "2026-11-22T03:47:57.586170+00:00"}, {"agent_id": "18ea415ef6bf60ef829f7f6b08b41809", "role": "respondent", "order": 1, "joined_at": "2026-11-22T03:47:57.586170+00:00"}], "state": "active", "created_at": "2026-11-22T03:47:57.586170+00:00", "expires_at": "2026-11-22T05:47:57.586170+00:00", "closed_at": null, "close_reason": "", "parent_channel_id": null, "knobs": {}, "labels": {}, "required_acks": null, "pending_acks": [], "rejected_by": []})";

// Indexed by the input's first byte modulo its size.
inline constexpr std::array<Ag2FileKind, 10> kAg2FileKinds = {{
    {"passport", "agents/18ea415ef6bf60ef829f7f6b08b41809/passport.json", {}},
    {"resume",
     "agents/18ea415ef6bf60ef829f7f6b08b41809/resume.json",
     {{{"agents/18ea415ef6bf60ef829f7f6b08b41809/passport.json",
        kBobPassport}}}},
    {"rule",
     "agents/18ea415ef6bf60ef829f7f6b08b41809/rule.json",
     {{{"agents/18ea415ef6bf60ef829f7f6b08b41809/passport.json",
        kBobPassport}}}},
    {"skill",
     "agents/18ea415ef6bf60ef829f7f6b08b41809/SKILL.md",
     {{{"agents/18ea415ef6bf60ef829f7f6b08b41809/passport.json",
        kBobPassport}}}},
    {"cursors",
     "agents/18ea415ef6bf60ef829f7f6b08b41809/inbox.cursors.json",
     {{{"agents/18ea415ef6bf60ef829f7f6b08b41809/passport.json",
        kBobPassport}}}},
    {"channel",
     "channels/18ea415ef6ef293d5bec87eabe61ccca/metadata.json",
     {{{"agents/18ea415ef6a36d322e5068cfe782b291/passport.json",
        kAlicePassport},
       {"agents/18ea415ef6bf60ef829f7f6b08b41809/passport.json",
        kBobPassport}}}},
    {"wal",
     "channels/18ea415ef6ef293d5bec87eabe61ccca/wal.jsonl",
     {{{"agents/18ea415ef6a36d322e5068cfe782b291/passport.json",
        kAlicePassport},
       {"agents/18ea415ef6bf60ef829f7f6b08b41809/passport.json", kBobPassport},
       {"channels/18ea415ef6ef293d5bec87eabe61ccca/metadata.json",
        kChannelMetadata}}}},
    {"audit",
     "audit/audit.jsonl",
     {{{"agents/18ea415ef6a36d322e5068cfe782b291/passport.json",
        kAlicePassport}}}},
    {"task",
     "tasks/task-1/metadata.json",
     {{{"agents/18ea415ef6bf60ef829f7f6b08b41809/passport.json",
        kBobPassport}}}},
    {"checkpoint",
     "tasks/task-1/checkpoint.json",
     {{{"agents/18ea415ef6bf60ef829f7f6b08b41809/passport.json",
        kBobPassport}}}},
}};

}  // namespace parley::fuzz
