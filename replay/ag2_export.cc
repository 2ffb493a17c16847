#include "replay/ag2_export.h"

#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/json/python_json.h"
#include "engine/json/records_json.h"
#include "engine/records/log_records.h"
#include "replay/ag2_tasks.h"
#include "replay/audit_trail.h"
#include "replay/folded_store.h"

namespace parley::replay {
namespace {

namespace fs = std::filesystem;

std::unexpected<Ag2Error> io_error(const std::string& what) {
  return std::unexpected(Ag2Error{Ag2ErrorKind::kIo, what});
}

std::unexpected<Ag2Error> data_error(const std::string& what) {
  return std::unexpected(Ag2Error{Ag2ErrorKind::kData, what});
}

Ag2Result<void> write_file(const fs::path& path, std::string_view text) {
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  if (error) {
    return io_error("cannot create " + path.parent_path().string() + ": " +
                    error.message());
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return io_error("cannot write " + path.string());
  return {};
}

}  // namespace

Ag2Result<Ag2ExportReport> export_ag2(const log::LogStore& store,
                                      const fs::path& out_dir) {
  std::error_code error;
  if (fs::exists(out_dir, error) &&
      (!fs::is_directory(out_dir, error) || !fs::is_empty(out_dir, error))) {
    return std::unexpected(
        Ag2Error{Ag2ErrorKind::kUsage,
                 out_dir.string() + " exists and is not an empty directory"});
  }
  auto folded = FoldedStore::fold(store);
  if (!folded) return data_error(folded.error().message);
  const engine::HubState& state = (*folded)->state();

  Ag2ExportReport report;
  std::string audit_lines;
  std::map<std::string, std::string> terminal_at;  // channel -> audit `at`
  auto trail = visit_audit_trail(store, [&](const nlohmann::json& record) {
    ++report.audit_records;
    audit_lines += engine::dump_python(record) + "\n";
    const std::string kind = record.value("kind", "");
    if ((kind == "channel_closed" || kind == "channel_expired") &&
        record.contains("at") && record["at"].is_string()) {
      terminal_at[audit_channel(record)] = record["at"].get<std::string>();
    }
    return true;
  });
  if (!trail) return data_error(trail.error().message);

  if (auto written = fs::create_directories(out_dir, error); error) {
    (void)written;
    return io_error("cannot create " + out_dir.string() + ": " +
                    error.message());
  }

  engine::AgentFilter everyone;
  everyone.limit = std::numeric_limits<std::size_t>::max();
  for (const engine::AgentRecord* agent : state.registry.list(everyone)) {
    const fs::path dir = out_dir / "agents" / agent->agent_id();
    for (const auto& [name, text] :
         {std::pair{
              "passport.json",
              engine::dump_python(engine::to_ordered_json(agent->passport))},
          std::pair{"resume.json", engine::dump_python(
                                       engine::to_ordered_json(agent->resume))},
          std::pair{"rule.json", engine::dump_python(
                                     engine::to_ordered_json(agent->rule))}}) {
      if (auto written = write_file(dir / name, text); !written)
        return std::unexpected(written.error());
    }
    if (agent->skill_md) {
      if (auto written = write_file(dir / "SKILL.md", *agent->skill_md);
          !written) {
        return std::unexpected(written.error());
      }
    }
    if (!agent->cursors.empty()) {
      if (auto written =
              write_file(dir / "inbox.cursors.json",
                         engine::dump_python(nlohmann::json(agent->cursors)));
          !written) {
        return std::unexpected(written.error());
      }
    }
    ++report.agents;
  }
  nlohmann::json by_capability = nlohmann::json::object();
  for (const auto& [capability, ids] : state.registry.capability_index()) {
    if (!ids.empty()) by_capability[capability] = ids;
  }
  if (auto written = write_file(out_dir / "registry" / "by_capability.json",
                                engine::dump_python(by_capability));
      !written) {
    return std::unexpected(written.error());
  }

  for (const engine::ChannelEntry* channel : state.channels.in_order()) {
    engine::ChannelMetadata metadata = channel->metadata;
    if (engine::is_terminal(metadata.state)) {
      auto at = terminal_at.find(metadata.channel_id);
      if (at != terminal_at.end()) metadata.closed_at = at->second;
    }
    const fs::path dir = out_dir / "channels" / metadata.channel_id;
    if (auto written =
            write_file(dir / "metadata.json",
                       engine::dump_python(engine::to_ordered_json(metadata)));
        !written) {
      return std::unexpected(written.error());
    }
    std::string wal;
    auto read = store.read_channel(
        metadata.channel_id, 1, log::kLastSequence,
        [&](std::uint64_t, std::uint64_t, std::string_view record) {
          if (auto envelope = engine::decode_envelope(record)) {
            wal += engine::dump_python(engine::to_json(*envelope)) + "\n";
            ++report.envelopes;
          }
          return true;
        });
    if (!read) {
      return data_error(std::string(log::to_string(read.error().code)) + ": " +
                        read.error().message);
    }
    if (auto written = write_file(dir / "wal.jsonl", wal); !written) {
      return std::unexpected(written.error());
    }
    ++report.channels;
  }
  auto tasks = export_ag2_tasks(store, out_dir);
  if (!tasks) return std::unexpected(tasks.error());
  report.tasks = *tasks;
  if (report.audit_records > 0) {
    if (auto written =
            write_file(out_dir / "audit" / "audit.jsonl", audit_lines);
        !written) {
      return std::unexpected(written.error());
    }
  }
  return report;
}

}  // namespace parley::replay
