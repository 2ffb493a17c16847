// Op results in AG2's key order. The op layer returns nlohmann::json, whose
// objects keep keys sorted; AG2's hub writes records in their declaration
// order. wire_result() rebuilds each known record shape of an op's result in
// that order; free-form values (event_data, knobs, labels, claims, checkpoints,
// payloads) keep the order they have.
//
// Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace parley::transport {

// `result` of `op` with every record in AG2's declaration order. The same
// JSON value: only key order changes.
nlohmann::ordered_json wire_result(std::string_view op,
                                   const nlohmann::json& result);

}  // namespace parley::transport
