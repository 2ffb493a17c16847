// What an op answers: AG2's JSON at once, or a hub change still to start.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <variant>

#include "engine/base/error.h"
#include "engine/hub/requests.h"

namespace parley::engine::op_layer {

// What an op's answer is told to, once.
using Reply = std::function<void(Result<nlohmann::json>)>;
// A hub change an op has parsed and checked, not yet started: started with
// a Dispatch, it tells its Reply once it is durable or refused. Owns
// everything it needs; the Hub it calls must outlive it.
using Mutation = std::function<void(Dispatch, Reply)>;
// An op's answer: AG2's JSON at once (reads, and refusals before the hub
// is asked), or a mutation to start.
using Answer = std::variant<nlohmann::json, Mutation>;

}  // namespace parley::engine::op_layer
