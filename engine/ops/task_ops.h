// AG2's task ops: get_task, list_tasks, observe_task, update_task,
// fire_task_event, checkpoint_task, read_task_checkpoint, in AG2's param names
// and JSON shapes (record_observation is with the identity ops).
#pragma once

#include "engine/ops/op_params.h"

namespace parley::engine::op_layer {

// Adds the task ops to `table`.
void add_task_ops(OpTable& table);

}  // namespace parley::engine::op_layer
