#include "replay/ag2_tasks.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/base/flex_json.h"
#include "engine/json/python_json.h"
#include "replay/ag2_files.h"
#include "schemas/record_builder.h"

namespace parley::replay {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::span<const std::uint8_t> bytes(
    const flatbuffers::Vector<std::uint8_t>* vector) {
  if (!vector) return {};
  return {vector->data(), vector->size()};
}

std::unexpected<Ag2Error> data_error(std::string what) {
  return ag2_data_error(std::move(what));
}

// `value`'s keys in `order` first, then any others (sorted).
nlohmann::ordered_json in_order(const json& value,
                                std::initializer_list<const char*> order) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const char* key : order) {
    if (value.contains(key)) out[key] = value[key];
  }
  for (const auto& [key, item] : value.items()) {
    if (!out.contains(key)) out[key] = item;
  }
  return out;
}

nlohmann::ordered_json ag2_task_order(const json& task) {
  nlohmann::ordered_json out = in_order(
      task, {"task_id", "owner_id", "spec", "state", "created_at", "started_at",
             "completed_at", "expires_at", "last_progress_at", "progress",
             "result", "error", "channel_id"});
  if (task.contains("spec") && task["spec"].is_object()) {
    out["spec"] = in_order(task["spec"],
                           {"title", "description", "payload", "capability"});
  }
  return out;
}

Ag2Result<void> write_file(const fs::path& path, std::string_view text) {
  std::error_code error;
  fs::create_directories(path.parent_path(), error);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (error || !out) {
    return std::unexpected(
        Ag2Error{Ag2ErrorKind::kIo, "cannot write " + path.string()});
  }
  return {};
}

Ag2Result<json> read_json(const fs::path& path) { return read_ag2_json(path); }

bool is_string(const json& object, const char* key) {
  return object.contains(key) && object[key].is_string();
}

}  // namespace

Ag2Result<std::size_t> export_ag2_tasks(const log::LogStore& store,
                                        const fs::path& out_dir) {
  std::vector<std::string> order;
  std::map<std::string, json> tasks;
  std::map<std::string, json> checkpoints;
  auto read = store.read(
      1, log::kLastSequence, [&](std::uint64_t, std::string_view record) {
        const schema::Record* root = schema::GetRecord(record.data());
        if (const auto* updated = root->body_as_TaskUpdated()) {
          const std::string id = updated->task_id()->str();
          if (!tasks.contains(id)) order.push_back(id);
          tasks[id] = engine::flex_to_json(bytes(updated->metadata()));
        } else if (const auto* checkpoint = root->body_as_TaskCheckpointed()) {
          checkpoints[checkpoint->task_id()->str()] =
              engine::flex_to_json(bytes(checkpoint->state()));
        }
        return true;
      });
  if (!read) {
    return data_error(std::string(log::to_string(read.error().code)) + ": " +
                      read.error().message);
  }
  for (const std::string& id : order) {
    if (auto written =
            write_file(out_dir / "tasks" / id / "metadata.json",
                       engine::dump_python(ag2_task_order(tasks[id])));
        !written) {
      return std::unexpected(written.error());
    }
  }
  // AG2 writes a checkpoint whether or not the task exists.
  for (const auto& [id, state] : checkpoints) {
    if (auto written = write_file(out_dir / "tasks" / id / "checkpoint.json",
                                  engine::dump_python(state));
        !written) {
      return std::unexpected(written.error());
    }
  }
  return order.size();
}

Ag2Result<std::vector<TaskRecord>> read_ag2_tasks(const fs::path& root) {
  std::vector<TaskRecord> records;
  std::error_code error;
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(root / "tasks", error)) {
    if (entry.is_directory(error)) dirs.push_back(entry.path());
  }
  std::ranges::sort(dirs);
  for (const fs::path& dir : dirs) {
    const std::string id = dir.filename().string();
    std::string at;
    if (fs::exists(dir / "metadata.json")) {
      auto task = read_json(dir / "metadata.json");
      if (!task) return std::unexpected(task.error());
      static const std::vector<std::string> kStates = {
          "created", "running", "completed", "failed", "expired", "cancelled"};
      if (!task->is_object() || !is_string(*task, "task_id") ||
          !is_string(*task, "owner_id") || !task->contains("spec") ||
          !(*task)["spec"].is_object() ||
          !is_string((*task)["spec"], "title") ||
          (task->contains("state") &&
           (!(*task)["state"].is_string() ||
            std::ranges::find(kStates, (*task)["state"].get<std::string>()) ==
                kStates.end()))) {
        return data_error((dir / "metadata.json").string() +
                          ": not an AG2 TaskMetadata (task_id, owner_id, "
                          "spec.title, a valid state); nothing was imported");
      }
      auto flex = engine::to_flex(*task);
      if (!flex)
        return data_error((dir / "metadata.json").string() + ": " +
                          flex.error().message);
      at = task->value("created_at", json("")).is_string()
               ? task->value("created_at", std::string())
               : std::string();
      flatbuffers::FlatBufferBuilder builder;
      auto task_id =
          builder.CreateString((*task)["task_id"].get<std::string>());
      auto channel =
          is_string(*task, "channel_id")
              ? builder.CreateString((*task)["channel_id"].get<std::string>())
              : 0;
      auto metadata = builder.CreateVector(*flex);
      auto body =
          schema::CreateTaskUpdated(builder, task_id, channel, metadata);
      records.push_back(
          {at, schema::finish_record(builder, schema::Body::TaskUpdated,
                                     body.Union())});
    }
    if (fs::exists(dir / "checkpoint.json")) {
      auto state = read_json(dir / "checkpoint.json");
      if (!state) return std::unexpected(state.error());
      if (!state->is_object()) {
        return data_error((dir / "checkpoint.json").string() +
                          ": a checkpoint must be a JSON object; nothing was "
                          "imported");
      }
      auto flex = engine::to_flex(*state);
      if (!flex)
        return data_error((dir / "checkpoint.json").string() + ": " +
                          flex.error().message);
      flatbuffers::FlatBufferBuilder builder;
      auto task_id = builder.CreateString(id);
      auto payload = builder.CreateVector(*flex);
      auto body = schema::CreateTaskCheckpointed(builder, task_id, payload);
      records.push_back(
          {at, schema::finish_record(builder, schema::Body::TaskCheckpointed,
                                     body.Union())});
    }
  }
  return records;
}

}  // namespace parley::replay
