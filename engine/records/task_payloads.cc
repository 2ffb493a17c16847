// Task payloads (engine/records/payloads.h).
#include "engine/records/payload_fields.h"
#include "engine/records/payloads.h"

namespace parley::engine {

Result<FlexBytes> encode_task(const TaskMetadata& task) {
  return write_payload([&](PayloadWriter& out) {
    out.text("task_id", task.task_id);
    out.text("owner_id", task.owner_id);
    out.object("spec", [&] {
      out.text("title", task.spec.title);
      out.text("description", task.spec.description);
      out.json("payload", task.spec.payload);
      out.text("capability", task.spec.capability);
    });
    out.text("state", task.state);
    out.text("created_at", task.created_at);
    out.text("started_at", task.started_at);
    out.text("completed_at", task.completed_at);
    out.text("expires_at", task.expires_at);
    out.text("last_progress_at", task.last_progress_at);
    out.json("progress", task.progress);
    out.json("result", task.result);
    out.text("error", task.error);
    out.text("channel_id", task.channel_id);
  });
}

Result<TaskMetadata> decode_task(std::span<const std::uint8_t> payload) {
  return read_payload<TaskMetadata>(
      payload_root(payload), "task", [](PayloadReader& in, TaskMetadata& task) {
        in.text("task_id", task.task_id, Presence::kRequired);
        in.text("owner_id", task.owner_id, Presence::kRequired);
        PayloadReader spec = in.object("spec", Presence::kRequired);
        spec.text("title", task.spec.title, Presence::kRequired);
        spec.text("description", task.spec.description);
        spec.json("payload", task.spec.payload);
        spec.text("capability", task.spec.capability);
        in.text("state", task.state);
        if (!is_task_state(task.state)) {
          in.wrong_type("state", "a TaskState");
        }
        in.text("created_at", task.created_at);
        in.text("started_at", task.started_at);
        in.text("completed_at", task.completed_at);
        in.text("expires_at", task.expires_at);
        in.text("last_progress_at", task.last_progress_at);
        in.json("progress", task.progress);
        in.json("result", task.result);
        in.text("error", task.error);
        in.text("channel_id", task.channel_id);
      });
}

}  // namespace parley::engine
