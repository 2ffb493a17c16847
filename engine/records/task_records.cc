#include "engine/records/task_records.h"

#include "engine/base/flex_text.h"
#include "engine/records/payloads.h"
#include "schemas/record_builder.h"

namespace parley::engine {

namespace {

std::span<const std::uint8_t> bytes(
    const flatbuffers::Vector<std::uint8_t>* vector) {
  if (!vector) return {};
  return {vector->data(), vector->size()};
}

std::unexpected<Error> undecodable(std::uint64_t log_sequence,
                                   std::string_view detail) {
  return fail(ErrorKind::kStorage,
              "corruption: log record " + std::to_string(log_sequence) +
                  " holds an unreadable task: " + std::string(detail));
}

}  // namespace

Result<std::string> task_updated_record(const TaskMetadata& task) {
  auto flex = encode_task(task);
  if (!flex) return std::unexpected(flex.error());
  flatbuffers::FlatBufferBuilder builder;
  auto id = builder.CreateString(task.task_id);
  auto channel = task.channel_id ? builder.CreateString(*task.channel_id) : 0;
  auto metadata = builder.CreateVector(*flex);
  auto body = schema::CreateTaskUpdated(builder, id, channel, metadata);
  return schema::finish_record(builder, schema::Body::TaskUpdated,
                               body.Union());
}

Result<std::string> task_checkpointed_record(std::string_view task_id,
                                             const JsonText& state) {
  flexbuffers::Builder flex;
  if (auto added = add_json_text(flex, nullptr, state); !added) {
    return std::unexpected(added.error());
  }
  flex.Finish();
  flatbuffers::FlatBufferBuilder builder;
  auto id = builder.CreateString(task_id);
  auto payload = builder.CreateVector(flex.GetBuffer());
  auto body = schema::CreateTaskCheckpointed(builder, id, payload);
  return schema::finish_record(builder, schema::Body::TaskCheckpointed,
                               body.Union());
}

std::string checkpoint_writers_claimed_record(
    std::string_view task_id, std::span<const std::string> writers) {
  flatbuffers::FlatBufferBuilder builder;
  auto id = builder.CreateString(task_id);
  auto names = builder.CreateVectorOfStrings(writers.begin(), writers.end());
  auto body = schema::CreateCheckpointWritersClaimed(builder, id, names);
  return schema::finish_record(builder, schema::Body::CheckpointWritersClaimed,
                               body.Union());
}

Result<void> apply_task_record(TaskTable& tasks, std::uint64_t log_sequence,
                               std::string_view record) {
  const schema::Record* root = schema::GetRecord(record.data());
  if (const auto* updated = root->body_as_TaskUpdated()) {
    auto task = decode_task(bytes(updated->metadata()));
    if (!task) return undecodable(log_sequence, task.error().message);
    tasks.put(std::move(*task));
    return {};
  }
  if (const auto* checkpointed = root->body_as_TaskCheckpointed()) {
    const auto state = bytes(checkpointed->state());
    const flexbuffers::Reference object =
        state.empty() ? flexbuffers::Reference()
                      : flexbuffers::GetRoot(state.data(), state.size());
    if (!object.IsMap()) {
      return undecodable(log_sequence, "a checkpoint that is not an object");
    }
    auto text = flex_to_json_text(object);
    if (!text) {
      return undecodable(log_sequence, "a checkpoint whose text is not UTF-8");
    }
    tasks.set_checkpoint(checkpointed->task_id()->str(), std::move(*text));
    return {};
  }
  if (const auto* claimed = root->body_as_CheckpointWritersClaimed()) {
    std::vector<std::string> writers;
    if (claimed->writers()) {
      for (const auto* writer : *claimed->writers()) {
        writers.push_back(writer->str());
      }
    }
    tasks.claim_checkpoint(claimed->task_id()->str(), std::move(writers));
    return {};
  }
  return {};
}

}  // namespace parley::engine
