#include "replay/ag2_import.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <queue>
#include <sstream>
#include <unordered_set>

#include "engine/base/clock.h"
#include "engine/base/flex_json.h"
#include "engine/base/idempotency.h"
#include "engine/base/ids.h"
#include "engine/base/input_limits.h"
#include "engine/base/json_input.h"
#include "engine/hub/audit.h"
#include "engine/json/records_json.h"
#include "engine/records/log_records.h"
#include "log/memory_log_store.h"
#include "replay/ag2_files.h"
#include "replay/ag2_tasks.h"
#include "replay/folded_store.h"

namespace parley::replay {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::unexpected<Ag2Error> data_error(std::string what) {
  return ag2_data_error(std::move(what));
}

Ag2Result<std::string> read_text(const fs::path& path) {
  return read_ag2_text(path);
}

Ag2Result<json> read_json(const fs::path& path) { return read_ag2_json(path); }

// The JSON lines of a .jsonl file, blank lines skipped; a torn last line
// (no final newline, not valid JSON) is left out with a warning.
Ag2Result<std::vector<std::pair<std::size_t, json>>> read_json_lines(
    const fs::path& path, std::vector<std::string>& warnings) {
  auto text = read_text(path);
  if (!text) return std::unexpected(text.error());
  std::vector<std::pair<std::size_t, json>> lines;
  std::size_t number = 0;
  for (std::size_t at = 0; at < text->size();) {
    std::size_t end = text->find('\n', at);
    const bool last = end == std::string::npos;
    if (last) end = text->size();
    ++number;
    std::string_view line(text->data() + at, end - at);
    at = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = path.string() + ":" + std::to_string(number);
    auto value = engine::parse_json_input(line, where);
    if (!value || !value->is_object()) {
      // A line within the limits that does not parse, at the very end with
      // no newline, is what a crash mid-write leaves.
      const bool within_limits =
          line.size() <= engine::kMaxJsonDocumentBytes &&
          engine::json_depth(line) <= engine::kMaxJsonDepth;
      if (last && !value && within_limits) {
        warnings.push_back(where + ": torn last line (" +
                           std::to_string(line.size()) +
                           " bytes, no newline), not imported");
        break;
      }
      return data_error(
          (value ? where + ": not a JSON object" : value.error().message) +
          "; nothing was imported");
    }
    lines.emplace_back(number, std::move(*value));
  }
  return lines;
}

// One record to append, with the time and kind that order it.
struct Item {
  std::string at;
  int rank = 0;  // agents, channels, envelopes, audit: ties in this order
  log::AppendEntry entry;
};

// Items of one stream are appended in their stream's order; streams are
// merged by (at, rank).
using Stream = std::vector<Item>;

std::vector<log::AppendEntry> merge(std::vector<Stream>& streams) {
  using Head = std::pair<std::size_t, std::size_t>;  // stream, position
  auto later = [&](const Head& a, const Head& b) {
    const Item& x = streams[a.first][a.second];
    const Item& y = streams[b.first][b.second];
    return std::tie(x.at, x.rank, a.first) > std::tie(y.at, y.rank, b.first);
  };
  std::priority_queue<Head, std::vector<Head>, decltype(later)> heads(later);
  for (std::size_t i = 0; i < streams.size(); ++i) {
    if (!streams[i].empty()) heads.push({i, 0});
  }
  std::vector<log::AppendEntry> entries;
  while (!heads.empty()) {
    auto [stream, position] = heads.top();
    heads.pop();
    entries.push_back(std::move(streams[stream][position].entry));
    if (position + 1 < streams[stream].size()) {
      heads.push({stream, position + 1});
    }
  }
  return entries;
}

std::vector<fs::path> sorted_directories(const fs::path& parent) {
  std::vector<fs::path> dirs;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(parent, error)) {
    if (entry.is_directory(error)) dirs.push_back(entry.path());
  }
  std::ranges::sort(dirs);
  return dirs;
}

class Importer {
 public:
  Importer(const fs::path& root, Ag2ImportReport& report)
      : root_(root), report_(report) {}

  Ag2Result<std::vector<log::AppendEntry>> read() {
    if (auto agents = read_agents(); !agents)
      return std::unexpected(agents.error());
    if (auto channels = read_channels(); !channels) {
      return std::unexpected(channels.error());
    }
    if (auto audit = read_audit(); !audit)
      return std::unexpected(audit.error());
    auto tasks = read_ag2_tasks(root_);
    if (!tasks) return std::unexpected(tasks.error());
    Stream task_stream;
    for (TaskRecord& task : *tasks) {
      task_stream.push_back({.at = std::move(task.at),
                             .rank = 4,
                             .entry = {std::move(task.record)}});
    }
    std::ranges::stable_sort(task_stream, {}, &Item::at);
    report_.task_records = task_stream.size();
    streams_.push_back(std::move(task_stream));
    std::vector<log::AppendEntry> entries = merge(streams_);
    for (auto& cursor : cursors_) entries.push_back(std::move(cursor));
    return entries;
  }

  // Channel id -> AG2's metadata.json, to compare with the fold.
  std::map<std::string, engine::ChannelMetadata> ag2_metadata;

 private:
  Ag2Result<void> read_agents() {
    Stream agents;
    for (const fs::path& dir : sorted_directories(root_ / "agents")) {
      if (!fs::exists(dir / "passport.json")) {
        report_.warnings.push_back(dir.string() +
                                   ": no passport.json, agent skipped");
        continue;
      }
      auto passport_json = read_json(dir / "passport.json");
      if (!passport_json) return std::unexpected(passport_json.error());
      auto passport = engine::passport_from_json(*passport_json);
      if (!passport) {
        return data_error((dir / "passport.json").string() + ": " +
                          passport.error().message);
      }
      if (auto name =
              engine::check_name("passport field 'name'", passport->name);
          !name) {
        return data_error((dir / "passport.json").string() + ": " +
                          name.error().message + "; nothing was imported");
      }
      engine::AgentRecord agent{.passport = std::move(*passport)};
      if (!agent.passport.agent_id) {
        agent.passport.agent_id = dir.filename().string();
      }
      if (agent.passport.auth.claim != "{}") {
        report_.warnings.push_back(
            (dir / "passport.json").string() +
            ": auth.claim dropped (Parley never stores credentials)");
        agent.passport.auth.claim = "{}";
      }
      if (fs::exists(dir / "resume.json")) {
        auto value = read_json(dir / "resume.json");
        if (!value) return std::unexpected(value.error());
        auto resume = engine::resume_from_json(*value);
        if (!resume) {
          return data_error((dir / "resume.json").string() + ": " +
                            resume.error().message);
        }
        agent.resume = std::move(*resume);
      }
      if (fs::exists(dir / "rule.json")) {
        auto value = read_json(dir / "rule.json");
        if (!value) return std::unexpected(value.error());
        auto rule = engine::rule_from_json(*value);
        if (!rule) {
          return data_error((dir / "rule.json").string() + ": " +
                            rule.error().message);
        }
        agent.rule = std::move(*rule);
      }
      if (fs::exists(dir / "SKILL.md")) {
        auto skill = read_text(dir / "SKILL.md");
        if (!skill) return std::unexpected(skill.error());
        if (auto text = engine::check_text("SKILL.md", *skill); !text) {
          return data_error((dir / "SKILL.md").string() + ": " +
                            text.error().message + "; nothing was imported");
        }
        agent.skill_md = std::move(*skill);
      }
      if (fs::exists(dir / "inbox.cursors.json")) {
        // AG2 ignores a cursor file that is not an object of envelope ids,
        // and so does import, saying so.
        const fs::path file = dir / "inbox.cursors.json";
        auto value = read_json(file);
        if (value && value->is_object()) {
          for (const auto& [channel, envelope] : value->items()) {
            if (!envelope.is_string() || channel.empty() ||
                !engine::has_id_shape(envelope.get<std::string>())) {
              report_.warnings.push_back(
                  file.string() + ": the cursor of channel '" + channel +
                  "' is not an envelope id (" + envelope.dump() +
                  "), ignored (as AG2 does)");
              continue;
            }
            cursors_.push_back({engine::cursor_advanced_record(
                agent.agent_id(), channel, envelope.get<std::string>())});
            ++report_.cursors;
          }
        } else {
          report_.warnings.push_back((dir / "inbox.cursors.json").string() +
                                     ": not an object, ignored (as AG2 does)");
        }
      }
      agents.push_back({.at = agent.passport.created_at,
                        .rank = 0,
                        .entry = {engine::agent_registered_record(agent)}});
      ++report_.agents;
    }
    std::ranges::stable_sort(agents, {}, &Item::at);
    streams_.push_back(std::move(agents));
    return {};
  }

  Ag2Result<void> read_channels() {
    for (const fs::path& dir : sorted_directories(root_ / "channels")) {
      if (!fs::exists(dir / "metadata.json")) {
        report_.warnings.push_back(dir.string() +
                                   ": no metadata.json, channel skipped");
        continue;
      }
      auto value = read_json(dir / "metadata.json");
      if (!value) return std::unexpected(value.error());
      auto metadata = engine::channel_metadata_from_json(*value);
      if (!metadata) {
        return data_error((dir / "metadata.json").string() + ": " +
                          metadata.error().message);
      }
      std::vector<engine::Envelope> envelopes;
      if (fs::exists(dir / "wal.jsonl")) {
        auto lines = read_json_lines(dir / "wal.jsonl", report_.warnings);
        if (!lines) return std::unexpected(lines.error());
        for (const auto& [number, line] : *lines) {
          auto envelope = engine::envelope_from_json(line);
          if (!envelope) {
            return data_error(
                (dir / "wal.jsonl").string() + ":" + std::to_string(number) +
                ": " + envelope.error().message + "; nothing was imported");
          }
          const std::string where =
              (dir / "wal.jsonl").string() + ":" + std::to_string(number);
          if (envelope->envelope_id.empty()) {
            return data_error(where +
                              ": the envelope has no envelope_id; nothing was "
                              "imported");
          }
          if (!engine::parse_timestamp(envelope->created_at)) {
            return data_error(
                where + ": the envelope's created_at '" + envelope->created_at +
                "' is not an ISO-8601 time; nothing was imported");
          }
          if (auto checked = engine::check_envelope(*envelope); !checked) {
            return data_error(where + ": " + checked.error().message +
                              "; nothing was imported");
          }
          if (envelope->channel_id != metadata->channel_id) {
            return data_error((dir / "wal.jsonl").string() + ":" +
                              std::to_string(number) +
                              ": envelope of channel " + envelope->channel_id +
                              "; nothing was imported");
          }
          envelopes.push_back(std::move(*envelope));
        }
      }
      streams_.push_back(channel_stream(*metadata, envelopes));
      ag2_metadata.emplace(metadata->channel_id, std::move(*metadata));
      ++report_.channels;
      report_.envelopes += envelopes.size();
    }
    return {};
  }

  // The channel as created, then its envelopes; which of them are the
  // hub's own (they move the folded lifecycle). AG2 ignored idempotency
  // keys, so its WAL may repeat one: the first envelope with a key is
  // indexed, as a Parley post would have been, and later repeats are
  // imported unindexed.
  static Stream channel_stream(const engine::ChannelMetadata& ag2,
                               const std::vector<engine::Envelope>& wal) {
    engine::ChannelMetadata created = ag2;
    created.state = engine::ChannelState::kPending;
    created.closed_at.reset();
    created.close_reason.clear();
    created.rejected_by.clear();
    created.pending_acks.clear();
    for (const engine::Participant& participant : ag2.participants) {
      if (participant.agent_id != ag2.creator_id) {
        created.pending_acks.push_back(participant.agent_id);
      }
    }
    Stream stream;
    stream.push_back({.at = created.created_at,
                      .rank = 1,
                      .entry = {engine::channel_created_record(created)}});
    const bool terminal = engine::is_terminal(ag2.state);
    const std::string_view terminal_type =
        ag2.state == engine::ChannelState::kExpired ? "ag2.channel.expired"
                                                    : "ag2.channel.closed";
    bool terminated = false;
    std::unordered_set<std::string> indexed_keys;
    for (const engine::Envelope& envelope : wal) {
      bool hub = false;
      if (envelope.sender_id == ag2.creator_id) {
        const std::string_view type = envelope.event_type;
        if (type == "ag2.channel.invite" ||
            type == "ag2.expectation.violated") {
          hub = true;
        } else if (type == "ag2.channel.opened") {
          hub = ag2.state != engine::ChannelState::kPending;
        } else if (terminal && !terminated && type == terminal_type) {
          const json data = engine::flex_to_json(envelope.event_data);
          hub = data.is_object() &&
                data.value("reason", json()) == json(ag2.close_reason);
          terminated = hub;
        }
      }
      std::string key;
      if (envelope.idempotency_key && !envelope.idempotency_key->empty()) {
        key = engine::post_idempotency_key(
            envelope.channel_id, envelope.sender_id, *envelope.idempotency_key);
        if (!indexed_keys.insert(key).second) key.clear();
      }
      stream.push_back({.at = envelope.created_at,
                        .rank = 2,
                        .entry = {engine::envelope_record(envelope, hub),
                                  envelope.channel_id, std::move(key)}});
    }
    return stream;
  }

  Ag2Result<void> read_audit() {
    Stream audit;
    const fs::path path = root_ / "audit" / "audit.jsonl";
    if (fs::exists(path)) {
      auto lines = read_json_lines(path, report_.warnings);
      if (!lines) return std::unexpected(lines.error());
      for (const auto& [number, line] : *lines) {
        if (!line.contains("kind") || !line["kind"].is_string() ||
            !line.contains("at") || !line["at"].is_string()) {
          return data_error(path.string() + ":" + std::to_string(number) +
                            ": an audit record needs string 'at' and 'kind'; "
                            "nothing was imported");
        }
        audit.push_back({.at = line["at"].get<std::string>(),
                         .rank = 3,
                         .entry = {engine::audit_record(line)}});
        ++report_.audit_records;
      }
    }
    streams_.push_back(std::move(audit));
    return {};
  }

  const fs::path root_;
  Ag2ImportReport& report_;
  std::vector<Stream> streams_;
  std::vector<log::AppendEntry> cursors_;
};

}  // namespace

Ag2Result<Ag2ImportReport> import_ag2(const fs::path& ag2_dir,
                                      log::LogStore& store) {
  std::error_code error;
  if (!fs::is_directory(ag2_dir / "agents", error) &&
      !fs::is_directory(ag2_dir / "channels", error)) {
    return std::unexpected(Ag2Error{Ag2ErrorKind::kNotFound,
                                    "no AG2 store at " + ag2_dir.string() +
                                        " (neither agents/ nor channels/)"});
  }
  if (const std::uint64_t last = store.last_sequence(); last != 0) {
    return std::unexpected(
        Ag2Error{Ag2ErrorKind::kUsage,
                 "refusing to import into a store that already holds " +
                     std::to_string(last) + " records; use a fresh store"});
  }
  Ag2ImportReport report;
  Importer importer(ag2_dir, report);
  auto entries = importer.read();
  if (!entries) return std::unexpected(entries.error());
  // Folded before anything is written, in a memory store holding the same
  // records: a record the fold cannot read fails the import, nothing
  // written.
  auto scratch = log::make_memory_log_store();
  if (!entries->empty()) {
    std::vector<log::AppendEntry> copy = *entries;
    if (auto staged = scratch->append(copy); !staged) {
      return data_error("the import's records are refused: " +
                        staged.error().message + "; nothing was imported");
    }
  }
  // The lifecycle is folded from the log in Parley; say where it differs
  // from what AG2's metadata.json recorded.
  auto folded = FoldedStore::fold(*scratch);
  if (!folded) {
    return data_error(folded.error().message + "; nothing was imported");
  }
  if (!entries->empty()) {
    auto appended = store.append(*entries);
    if (!appended) {
      return std::unexpected(Ag2Error{
          appended.error().code == log::ErrorCode::kInvalidArgument
              ? Ag2ErrorKind::kData
              : Ag2ErrorKind::kIo,
          "the store refused the import: " + appended.error().message});
    }
  }
  for (const auto& entry : importer.ag2_metadata) {
    // Not structured bindings: the lambda below captures id, which clang
    // 14 cannot do for a binding.
    const auto& id = entry.first;
    const auto& ag2 = entry.second;
    const engine::ChannelEntry* channel = (*folded)->state().channels.find(id);
    if (!channel) continue;
    const engine::ChannelMetadata& parley = channel->metadata;
    auto differs = [&](std::string_view field, const json& ours,
                       const json& theirs) {
      if (ours == theirs) return;
      report.warnings.push_back("channel " + id + ": " + std::string(field) +
                                " folds to " + ours.dump() +
                                ", AG2's metadata.json says " + theirs.dump());
    };
    differs("state", engine::to_string(parley.state),
            engine::to_string(ag2.state));
    differs("close_reason", parley.close_reason, ag2.close_reason);
    differs("pending_acks", parley.pending_acks, ag2.pending_acks);
    differs("rejected_by", parley.rejected_by, ag2.rejected_by);
  }
  return report;
}

}  // namespace parley::replay
