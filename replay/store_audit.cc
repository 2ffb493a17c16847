#include "replay/store_audit.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/base/idempotency.h"
#include "engine/hub/hub.h"
#include "engine/json/records_json.h"
#include "log/memory_log_store.h"
#include "parley/schemas/log_generated.h"
#include "replay/folded_store.h"
#include "replay/state_hash.h"
#include "schemas/record.h"

namespace parley::replay {
namespace {

// What the raw scan of the log found under one key. Kept for every record,
// so kept small: the channel is interned (ChannelNames).
struct StoredRecord {
  std::uint64_t channel_sequence = 0;
  std::uint32_t channel = 0;  // an envelope's channel_id; 0: none
  bool present = false;       // the log holds this key
  bool verified = false;
  bool envelope = false;
  bool indexed = false;  // a channel-index entry points at it correctly
};

// Channel ids, each stored once; id 0 is "".
class ChannelNames {
 public:
  std::uint32_t intern(std::string_view channel) {
    if (channel.empty()) return 0;
    auto [it, fresh] = ids_.try_emplace(
        std::string(channel), static_cast<std::uint32_t>(names_.size()));
    if (fresh) names_.push_back(it->first);
    return it->second;
  }
  const std::string& operator[](std::uint32_t id) const { return names_[id]; }

 private:
  std::vector<std::string> names_{""};
  std::unordered_map<std::string, std::uint32_t> ids_;
};

// StoredRecords by log sequence: a dense table for the keys from 1 up, as
// a sound store holds them (a scan adds them in order), and a map for keys
// far past the table's end or 0, which only a damaged store holds.
class RecordTable {
 public:
  StoredRecord& add(std::uint64_t key) {
    constexpr std::uint64_t kMaxGap = 1 << 16;
    if (key > dense_.size() && key - dense_.size() <= kMaxGap) {
      dense_.resize(key);
    }
    StoredRecord& stored =
        key >= 1 && key <= dense_.size() ? dense_[key - 1] : strays_[key];
    stored.present = true;
    return stored;
  }
  StoredRecord* find(std::uint64_t key) {
    if (key >= 1 && key <= dense_.size()) {
      return dense_[key - 1].present ? &dense_[key - 1] : nullptr;
    }
    auto found = strays_.find(key);
    return found == strays_.end() ? nullptr : &found->second;
  }
  // Visits every record in key order.
  template <typename Visit>
  void for_each(Visit visit) const {
    auto stray = strays_.begin();
    for (; stray != strays_.end() && stray->first < 1; ++stray) {
      visit(stray->first, stray->second);
    }
    for (std::uint64_t key = 1; key <= dense_.size(); ++key) {
      if (dense_[key - 1].present) visit(key, dense_[key - 1]);
    }
    for (; stray != strays_.end(); ++stray) visit(stray->first, stray->second);
  }

 private:
  std::vector<StoredRecord> dense_;
  std::map<std::uint64_t, StoredRecord> strays_;
};

std::string range_text(std::uint64_t first, std::uint64_t last) {
  return first == last ? std::to_string(first)
                       : std::to_string(first) + ".." + std::to_string(last);
}

class Auditor {
 public:
  Auditor(const log::LogStore& store, AuditReport& report)
      : store_(store), report_(report) {}

  engine::Result<void> run() {
    if (auto scanned = scan_log(); !scanned) return scanned;
    if (auto scanned = scan_channel_index(); !scanned) return scanned;
    check_unindexed();
    if (auto scanned = scan_idempotency_index(); !scanned) return scanned;
    fold_and_compare();
    return {};
  }

  // Channel id -> manifest type, of every channel the log created.
  std::map<std::string, std::string> channel_types;
  std::set<std::string> channels_seen;

 private:
  void problem(std::string channel, std::uint64_t channel_sequence,
               std::uint64_t log_sequence, std::string what) {
    report_.problems.push_back({.channel = std::move(channel),
                                .channel_sequence = channel_sequence,
                                .log_sequence = log_sequence,
                                .what = std::move(what)});
  }

  engine::Result<void> scan_log() {
    std::uint64_t expected = 1;
    auto scanned = store_.scan_log([&](std::uint64_t key,
                                       std::string_view bytes) {
      ++report_.records;
      if (key > expected) {
        problem({}, 0, expected,
                "log sequence " + range_text(expected, key - 1) +
                    " missing from the log (the log is not dense)");
      }
      expected = key + 1;
      StoredRecord& stored = records_.add(key);
      auto sequences = schema::verify_record(bytes);
      if (!sequences) {
        problem({}, 0, key,
                sequences.error().kind == schema::RecordFault::Kind::kMalformed
                    ? "record fails the FlatBuffers Verifier"
                    : sequences.error().describe(bytes.size()));
        return true;
      }
      stored.verified = true;
      stored.channel_sequence = sequences->channel_sequence;
      const schema::Record* root = schema::GetRecord(bytes.data());
      if (const auto* envelope = root->body_as_Envelope()) {
        stored.envelope = true;
        stored.channel =
            channels_.intern(envelope->channel_id()->string_view());
        if (envelope->idempotency_key() &&
            envelope->idempotency_key()->size() > 0) {
          post_keys_[key] = engine::post_idempotency_key(
              envelope->channel_id()->string_view(),
              envelope->sender_id()->string_view(),
              envelope->idempotency_key()->string_view());
        }
        channels_seen.insert(channels_[stored.channel]);
      } else if (const auto* created = root->body_as_ChannelCreated()) {
        channels_seen.insert(created->channel_id()->str());
        created_at_[created->channel_id()->str()] = key;
      } else if (const auto* fired = root->body_as_ExpectationFired()) {
        fired_at_[fired->channel_id()->str()].push_back(key);
      }
      const std::string& channel = channels_[stored.channel];
      if (sequences->log_sequence != key) {
        problem(channel, stored.channel_sequence, key,
                "record stamped with log sequence " +
                    std::to_string(sequences->log_sequence) +
                    ", stored under " + std::to_string(key));
      }
      if (!channel.empty() && stored.channel_sequence == 0) {
        problem(channel, 0, key,
                "envelope has no channel sequence (not in the channel index)");
      }
      if (stored.channel_sequence != 0) {
        stamped_[channel].push_back({stored.channel_sequence, key});
      }
      return true;
    });
    if (!scanned) return engine::storage_error(scanned.error());
    const std::uint64_t last = store_.last_sequence();
    if (expected <= last) {
      problem({}, 0, expected,
              "log sequence " + range_text(expected, last) +
                  " missing from the log (the store's last sequence is " +
                  std::to_string(last) + ")");
    }
    // Stamped channel sequences must be dense per channel.
    for (auto& [channel, stamps] : stamped_) {
      std::ranges::sort(stamps);
      std::uint64_t next = 1;
      for (const auto& [channel_sequence, log_sequence] : stamps) {
        if (channel.empty()) {
          problem({}, channel_sequence, log_sequence,
                  "record stamped with a channel sequence but names no "
                  "channel");
        } else if (channel_sequence < next) {
          problem(channel, channel_sequence, log_sequence,
                  "channel sequence stamped on two records");
        } else if (channel_sequence > next) {
          problem(channel, next, log_sequence,
                  "channel sequence " + range_text(next, channel_sequence - 1) +
                      " stamped on no record (the channel is not dense)");
        }
        next = std::max(next, channel_sequence + 1);
      }
    }
    return {};
  }

  engine::Result<void> scan_channel_index() {
    std::string current;
    std::uint64_t next = 1;
    auto scanned = store_.scan_channel_index([&](std::string_view channel,
                                                 std::uint64_t channel_sequence,
                                                 std::uint64_t log_sequence) {
      std::string id(channel);
      if (id != current) {
        current = id;
        next = 1;
      }
      if (channel_sequence > next) {
        problem(id, next, 0,
                "channel index entry for channel sequence " +
                    range_text(next, channel_sequence - 1) + " missing");
      } else if (channel_sequence < next) {
        // Two entries' runs overlap (the store's entries cover runs).
        problem(id, channel_sequence, log_sequence,
                "channel index lists channel sequence " +
                    std::to_string(channel_sequence) + " twice");
        return true;
      }
      next = channel_sequence + 1;
      StoredRecord* found = records_.find(log_sequence);
      if (!found) {
        problem(id, channel_sequence, log_sequence,
                "channel index entry points at log sequence " +
                    std::to_string(log_sequence) + ", which is missing");
        return true;
      }
      StoredRecord& stored = *found;
      if (!stored.verified) return true;  // already reported
      if (channels_[stored.channel] != id) {
        problem(id, channel_sequence, log_sequence,
                "channel index entry points at a record of channel '" +
                    channels_[stored.channel] + "'");
      } else if (stored.channel_sequence != channel_sequence) {
        problem(id, channel_sequence, log_sequence,
                "channel index entry points at a record stamped with "
                "channel sequence " +
                    std::to_string(stored.channel_sequence));
      } else {
        stored.indexed = true;
      }
      return true;
    });
    if (!scanned) return engine::storage_error(scanned.error());
    return {};
  }

  void check_unindexed() {
    records_.for_each(
        [&](std::uint64_t log_sequence, const StoredRecord& stored) {
          if (stored.verified && stored.channel_sequence != 0 &&
              !stored.indexed && stored.channel != 0) {
            problem(channels_[stored.channel], stored.channel_sequence,
                    log_sequence, "missing from the channel index");
          }
        });
  }

  engine::Result<void> scan_idempotency_index() {
    std::map<std::uint64_t, std::string> key_of;
    auto scanned = store_.scan_idempotency_index(
        [&](std::string_view key, std::uint64_t log_sequence) {
          const StoredRecord* found = records_.find(log_sequence);
          const std::string& channel = channels_[found ? found->channel : 0];
          const std::uint64_t channel_sequence =
              found ? found->channel_sequence : 0;
          if (!found) {
            problem({}, 0, log_sequence,
                    "idempotency key '" + std::string(key) +
                        "' points at log sequence " +
                        std::to_string(log_sequence) + ", which is missing");
          } else if (!found->verified) {
            // already reported
          } else if (auto posted = post_keys_.find(log_sequence);
                     !found->envelope || posted == post_keys_.end() ||
                     key != posted->second) {
            problem(channel, channel_sequence, log_sequence,
                    "idempotency key '" + std::string(key) +
                        "' points at a record that is not an envelope "
                        "posted with that key by that sender in that "
                        "channel");
          } else if (auto [other, fresh] =
                         key_of.emplace(log_sequence, std::string(key));
                     !fresh) {
            problem(channel, channel_sequence, log_sequence,
                    "idempotency keys '" + other->second + "' and '" +
                        std::string(key) + "' both point at this record");
          }
          return true;
        });
    if (!scanned) return engine::storage_error(scanned.error());
    return {};
  }

  void fold_and_compare() {
    auto first = FoldedStore::fold(store_);
    if (!first) {
      problem({}, 0, 0, "the fold stopped: " + first.error().message);
      return;
    }
    for (const engine::ChannelEntry* channel :
         (*first)->state().channels.in_order()) {
      channel_types[channel->metadata.channel_id] =
          channel->metadata.manifest.type;
    }
    auto second = FoldedStore::fold(store_);
    if (!second) {
      problem({}, 0, 0, "the second fold stopped: " + second.error().message);
      return;
    }
    const std::uint64_t hash = store_state_hash((*first)->state());
    const std::uint64_t again = store_state_hash((*second)->state());
    report_.state_hash = hash;
    if (again != hash) {
      problem({}, 0, 0,
              "folding twice gave different states (state hash " +
                  hash_hex(hash) + ", then " + hash_hex(again) + ")");
      return;
    }
    refold_channels((*first)->state());
    compare_with_engine((*first)->state());
  }

  // Folds each channel alone — its ChannelCreated record, then its
  // envelopes read through the channel index, with its ExpectationFired
  // records (a hide handler's hides fold from those, and they are not in the
  // channel index) in log order among them — and compares the channel's
  // state hash with the full fold's.
  void refold_channels(const engine::HubState& folded) {
    for (const engine::ChannelEntry* full : folded.channels.in_order()) {
      const std::string& id = full->metadata.channel_id;
      auto created = created_at_.find(id);
      if (created == created_at_.end()) continue;
      auto adapters = builtin_adapter_registry();
      engine::HubState alone(*adapters);
      std::optional<std::string> failed;
      auto apply = [&](std::uint64_t log_sequence, std::string_view record) {
        if (auto applied = alone.apply(log_sequence, record); !applied) {
          failed = applied.error().message;
          return false;
        }
        return true;
      };
      auto read = store_.read(created->second, created->second, apply);
      const std::vector<std::uint64_t>& fired = fired_at_[id];
      auto next_fired = fired.begin();
      // Applies the channel's ExpectationFired records before `before`.
      auto apply_fired = [&](std::uint64_t before) {
        for (; read && !failed && next_fired != fired.end() &&
               *next_fired < before;
             ++next_fired) {
          read = store_.read(*next_fired, *next_fired, apply);
        }
        return read && !failed;
      };
      if (read && !failed) {
        auto indexed = store_.read_channel(
            id, 1, log::kLastSequence,
            [&](std::uint64_t, std::uint64_t log_sequence,
                std::string_view record) {
              return apply_fired(log_sequence) && apply(log_sequence, record);
            });
        if (read && !indexed) read = indexed;
        apply_fired(log::kLastSequence);
      }
      if (!read || failed) {
        problem(id, 0, 0,
                "folding the channel alone through its index failed: " +
                    (failed ? *failed : read.error().message));
        continue;
      }
      const engine::ChannelEntry* channel = alone.channels.find(id);
      if (!channel ||
          channel_state_hash(*channel) != channel_state_hash(*full)) {
        problem(id, 0, 0,
                "folding the channel alone through its index gives state "
                "hash " +
                    (channel ? hash_hex(channel_state_hash(*channel))
                             : std::string("(none)")) +
                    ", the whole log " + hash_hex(channel_state_hash(*full)));
      }
    }
  }

  // Opens a Hub on the log, through an overlay that keeps what the Hub
  // writes at open (orphaned channels it expires) off the store, and
  // compares what it reports with `folded`.
  void compare_with_engine(const engine::HubState& folded) {
    auto hub =
        engine::Hub::open({.store = log::make_overlay_log_store(store_)});
    if (!hub) {
      problem({}, 0, 0, "the engine refuses the log: " + hub.error().message);
      return;
    }
    compare_channels(folded, **hub);
    compare_agents(folded, **hub);
    (void)(*hub)->close();
  }

  void compare_channels(const engine::HubState& folded,
                        const engine::Hub& hub) {
    for (const engine::ChannelEntry* channel : folded.channels.in_order()) {
      const std::string& id = channel->metadata.channel_id;
      auto reported = hub.get_channel(id);
      if (!reported) {
        problem(id, 0, 0, "the engine does not know the channel");
        continue;
      }
      nlohmann::json expected = engine::to_json(channel->metadata);
      nlohmann::json actual = engine::to_json(*reported);
      const bool orphaned =
          channel->metadata.state == engine::ChannelState::kPending;
      if (orphaned) {
        expected["state"] = "expired";
        expected["close_reason"] = "hydrate_orphaned_pending";
        expected["closed_at"] = actual["closed_at"];
      }
      for (const auto& [key, value] : expected.items()) {
        if (actual[key] != value) {
          problem(id, 0, 0,
                  "metadata field '" + key + "': the engine reports " +
                      actual[key].dump() + ", the fold " + value.dump());
        }
      }
      if (orphaned) continue;
      auto state = hub.adapter_state(id);
      const nlohmann::json actual_state =
          state && *state ? nlohmann::json::parse(**state) : nlohmann::json();
      const nlohmann::json expected_state =
          channel->state ? nlohmann::json::parse(channel->state->to_json())
                         : nlohmann::json();
      if (actual_state != expected_state) {
        problem(id, 0, 0,
                "adapter state: the engine reports " + actual_state.dump() +
                    ", the fold " + expected_state.dump());
      }
    }
    const std::size_t reported =
        hub.list_channels(std::nullopt, std::nullopt,
                          std::numeric_limits<std::size_t>::max())
            .size();
    if (reported != folded.channels.in_order().size()) {
      problem({}, 0, 0,
              "the engine reports " + std::to_string(reported) +
                  " channels, the fold " +
                  std::to_string(folded.channels.in_order().size()));
    }
  }

  void compare_agents(const engine::HubState& folded, const engine::Hub& hub) {
    engine::AgentFilter everyone;
    everyone.limit = std::numeric_limits<std::size_t>::max();
    for (const engine::AgentRecord* agent : folded.registry.list(everyone)) {
      const std::string& id = agent->agent_id();
      const std::string label =
          "agent " + id + " (" + agent->passport.name + ")";
      auto passport = hub.get_agent(id);
      auto resume = hub.get_resume(id);
      auto rule = hub.get_rule(id);
      if (!passport || !resume || !rule) {
        problem({}, 0, 0, label + ": the engine does not know the agent");
        continue;
      }
      auto differs = [&](std::string_view what, const nlohmann::json& actual,
                         const nlohmann::json& expected) {
        if (actual == expected) return;
        problem({}, 0, 0,
                label + ": " + std::string(what) + ": the engine reports " +
                    actual.dump() + ", the fold " + expected.dump());
      };
      differs("passport", engine::to_json(*passport),
              engine::to_json(agent->passport));
      differs("resume", engine::to_json(*resume),
              engine::to_json(agent->resume));
      differs("rule", engine::to_json(*rule), engine::to_json(agent->rule));
      auto skill = hub.get_skill(id);
      differs("SKILL.md", skill ? nlohmann::json(*skill) : nlohmann::json(),
              agent->skill_md ? nlohmann::json(*agent->skill_md)
                              : nlohmann::json());
      for (const auto& [channel, envelope_id] : agent->cursors) {
        differs("cursor of channel " + channel, hub.inbox_cursor(id, channel),
                envelope_id);
      }
    }
    const std::size_t reported = hub.list_agents(everyone).size();
    if (reported != folded.registry.size()) {
      problem({}, 0, 0,
              "the engine reports " + std::to_string(reported) +
                  " agents, the fold " +
                  std::to_string(folded.registry.size()));
    }
  }

  const log::LogStore& store_;
  AuditReport& report_;
  ChannelNames channels_;
  RecordTable records_;
  // log sequence -> the index key of an envelope posted with an
  // idempotency key (engine::post_idempotency_key)
  std::map<std::uint64_t, std::string> post_keys_;
  // channel -> the log sequence of its ChannelCreated record
  std::map<std::string, std::uint64_t> created_at_;
  // channel -> the log sequences of its ExpectationFired records, in order
  std::map<std::string, std::vector<std::uint64_t>> fired_at_;
  // channel -> (channel sequence, log sequence) stamped on its records
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>>
      stamped_;
};

}  // namespace

engine::Result<AuditReport> audit_store(const log::LogStore& store,
                                        const AuditOptions& options) {
  AuditReport report;
  Auditor auditor(store, report);
  if (auto ran = auditor.run(); !ran) return std::unexpected(ran.error());
  for (const std::string& channel : options.channels) {
    if (!auditor.channels_seen.contains(channel) &&
        !auditor.channel_types.contains(channel)) {
      return engine::not_found("channel not found: " + channel);
    }
  }
  if (!options.channels.empty()) {
    std::erase_if(report.problems, [&](const AuditProblem& problem) {
      return std::ranges::find(options.channels, problem.channel) ==
             options.channels.end();
    });
  }
  for (AuditProblem& problem : report.problems) {
    auto type = auditor.channel_types.find(problem.channel);
    if (type != auditor.channel_types.end()) {
      problem.channel_type = type->second;
    }
  }
  report.channels = options.channels.empty() ? auditor.channels_seen.size()
                                             : options.channels.size();
  return report;
}

std::string describe(const AuditProblem& problem) {
  std::string text;
  auto part = [&](const std::string& piece) {
    if (!text.empty()) text += ", ";
    text += piece;
  };
  if (!problem.channel.empty()) {
    part("channel " + problem.channel +
         (problem.channel_type.empty() ? ""
                                       : " (" + problem.channel_type + ")"));
  }
  if (problem.channel_sequence != 0) {
    part("sequence " + std::to_string(problem.channel_sequence));
  }
  if (problem.log_sequence != 0) {
    part("log sequence " + std::to_string(problem.log_sequence));
  }
  return text.empty() ? problem.what : text + ": " + problem.what;
}

}  // namespace parley::replay
